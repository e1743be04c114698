package arrowio

import (
	"context"
	"fmt"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/stream"
)

// OpenChunks opens path, a file Handles reports, for reading in chunks: a
// Parquet file a row group at a time (several read ahead side by side; a
// huge group in batches), an Arrow IPC file or stream a window of batches
// at a time (chunkRows points a chunk, 0: the default). A pipe or device
// is copied to a temporary file first. Package pointio/formats opens the
// other formats, and standard input.
func OpenChunks(ctx context.Context, path string, opts pointio.ReadOptions, chunkRows int) (stream.ChunkReader, error) {
	switch {
	case spoolable(path):
		return openSpooledChunks(ctx, path, opts, chunkRows)
	case isIPC(path):
		return openIPCChunks(ctx, path, opts)
	}
	return openParquetChunks(path, opts, chunkRows, 0)
}

func openParquetChunks(path string, opts pointio.ReadOptions, chunkRows, workers int) (stream.ChunkReader, error) {
	return openParquetRange(path, opts, chunkRows, workers, 0, -1)
}

// openParquetRange reads the row groups that hold rows [lo, hi) (hi < 0:
// to the end), the chunks cut to them.
func openParquetRange(path string, opts pointio.ReadOptions, chunkRows, workers int, lo, hi int64) (_ stream.ChunkReader, err error) {
	defer recoverCorrupt(path, &err)
	rdr, err := openParquetFile(path)
	if err != nil {
		return nil, inputError(path, "not a readable Parquet file", err)
	}
	defer rdr.Close()
	src, err := parquetSourceOf(path, rdr, opts)
	if err != nil {
		return nil, err
	}
	starts, err := groupStarts(path, rdr)
	if err != nil {
		return nil, err
	}
	if err := verifyParquet(path, rdr, src.leaves(rdr), starts); err != nil {
		return nil, err
	}
	n := starts[len(starts)-1]
	if hi < 0 {
		hi = n
	}
	if lo < 0 || hi < lo || hi > n {
		return nil, inputError(path, fmt.Sprintf("rows [%d, %d) of %d", lo, hi, n), nil)
	}
	g0, g1 := groupsOf(starts, lo, hi)
	for g := g0; g < g1; g++ {
		if starts[g+1]-starts[g] > bigGroupRows {
			return openParquetBatches(src, starts, g0, g1, lo, hi)
		}
	}
	return newParquetChunks(src, starts, g0, g1, lo, hi, chunkRows, workers), nil
}

// groupStarts is each row group's first row, and the row count last,
// checked as the whole-file reader checks them.
func groupStarts(path string, rdr *file.Reader) ([]int64, error) {
	starts := make([]int64, rdr.NumRowGroups()+1)
	for g := range rdr.NumRowGroups() {
		starts[g+1] = starts[g] + rdr.MetaData().RowGroup(g).NumRows()
	}
	if err := checkRows(path, starts, fileSize(path)); err != nil {
		return nil, err
	}
	if starts[len(starts)-1] == 0 {
		return nil, inputError(path, "no points", nil)
	}
	return starts, nil
}

// groupsOf is the row groups [g0, g1) that hold rows [lo, hi).
func groupsOf(starts []int64, lo, hi int64) (g0, g1 int) {
	g0, g1 = 0, len(starts)-1
	for g0 < g1 && starts[g0+1] <= lo {
		g0++
	}
	for g1 > g0 && starts[g1-1] >= hi {
		g1--
	}
	return g0, g1
}

// openGroups opens a reader of the file's row groups.
func (src *columnSource) openGroups() (rdr *file.Reader, fr *pqarrow.FileReader, err error) {
	defer recoverCorrupt(src.path, &err)
	return openParquetArrow(src.path, 1<<16)
}

// cutChunk is the rows of c in [lo, hi).
func cutChunk(c stream.Chunk, lo, hi int64) stream.Chunk {
	n := int64(c.Len())
	a := min(max(lo-c.Base, 0), n)
	b := max(min(n, hi-c.Base), a)
	if a == 0 && b == int64(c.Len()) {
		return c
	}
	out := stream.Chunk{Base: c.Base + a, Lat: c.Lat[a:b], Lon: c.Lon[a:b]}
	if c.IDs != nil {
		out.IDs = c.IDs[a:b]
	}
	return out
}

// OpenChunksRange is OpenChunks for rows [lo, hi) of path, an MPI rank's
// share of a file every rank reads: a Parquet file's row groups that hold
// them (the chunks cut to them), an Arrow file read from the start and
// cut (pointio.ChunkRange). Errors name rows in the whole file.
func OpenChunksRange(ctx context.Context, path string, opts pointio.ReadOptions, chunkRows int, lo, hi int64) (stream.ChunkReader, error) {
	if IsParquet(path) && !spoolable(path) {
		return openParquetRange(path, opts, chunkRows, 0, lo, hi)
	}
	r, err := OpenChunks(ctx, path, opts, chunkRows)
	if err != nil {
		return nil, err
	}
	return pointio.ChunkRange(r, lo, hi), nil
}

// ipcChunks reads an Arrow IPC file or stream a window of batches (about
// ipcWindowRows rows) at a time, decoded on every core.
type ipcChunks struct {
	f     *os.File
	path  string
	src   *columnSource
	next  func() (arrow.RecordBatch, error)
	rows  int64
	total int
	done  error
}

func openIPCChunks(ctx context.Context, path string, opts pointio.ReadOptions) (_ stream.ChunkReader, err error) {
	defer recoverCorruptAs(path, "Arrow IPC", &err)
	f, err := openIPCFile(path)
	if err != nil {
		return nil, err
	}
	c, err := newIPCChunks(f, path, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	return c, nil
}

func newIPCChunks(f *os.File, path string, opts pointio.ReadOptions) (*ipcChunks, error) {
	rows, err := verifyIPC(f)
	if err != nil {
		return nil, inputError(path, "corrupt Arrow IPC file", err)
	}
	next, schema, err := ipcBatches(f)
	if err != nil {
		return nil, inputError(path, "not a readable Arrow IPC file", err)
	}
	next = checkedBatches(path, next)
	src, err := ipcSource(path, schema, opts)
	if err != nil {
		return nil, err
	}
	return &ipcChunks{f: f, path: path, src: src, next: next, rows: rows}, nil
}

func (c *ipcChunks) Next(ctx context.Context, dst stream.Chunk) (_ stream.Chunk, err error) {
	if c.done != nil {
		return stream.Chunk{}, c.done
	}
	defer func() {
		if err != nil {
			c.done = err
		}
	}()
	defer recoverCorruptAs(c.path, "Arrow IPC", &err)
	recs, rows, err := readWindow(ctx, c.path, c.next)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	if err != nil {
		return stream.Chunk{}, err
	}
	if rows == 0 {
		if c.total == 0 {
			return stream.Chunk{}, inputError(c.path, "no points", nil)
		}
		return stream.Chunk{}, ipcEnd(c.path, int64(c.total), c.rows)
	}
	c.src.base, c.src.ids = int64(c.total), nil
	pts, err := c.src.decodeBatches(recs, c.total, rows)
	if err != nil {
		return stream.Chunk{}, err
	}
	out := stream.Chunk{Base: int64(c.total), IDs: c.src.ids}
	out.Lat, out.Lon = pointio.AppendRadiansParallel(dst.Lat[:0], dst.Lon[:0], pts)
	c.total += rows
	return out, nil
}

// Rows is what the batches claim (verified metadata, a hint).
func (c *ipcChunks) Rows() int64 { return c.rows }

func (c *ipcChunks) Close() error {
	if c.done == nil {
		c.done = fmt.Errorf("arrowio: chunk reader closed")
	}
	return c.f.Close()
}
