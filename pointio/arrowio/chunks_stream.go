package arrowio

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/geoknn/geoknn/pointio"
	"github.com/paulmach/orb"
)

// OpenChunks opens path for reading in chunks: a Parquet file a row group
// at a time (several read ahead side by side; a huge group in batches),
// an Arrow IPC file or stream a window of batches at a time, standard
// input ("-") as OpenReaderChunks reads it, any other format as
// pointio.OpenChunks reads it (chunkRows points a chunk, 0: the default).
func OpenChunks(ctx context.Context, path string, opts pointio.ReadOptions, chunkRows int) (pointio.ChunkReader, error) {
	switch {
	case path == "-":
		return OpenReaderChunks(ctx, os.Stdin, opts, chunkRows, "")
	case isIPC(path):
		return openIPCChunks(ctx, path, opts)
	case pointio.IsParquet(path):
		return openParquetChunks(path, opts, chunkRows, 0)
	}
	return pointio.OpenChunks(ctx, path, opts, chunkRows)
}

// parquetChunks reads a Parquet file's row groups in order, a chunk each:
// workers read groups w, w+workers, ... ahead, each on its own reader,
// a group each in hand, so at most 2 x workers groups are held.
type parquetChunks struct {
	n       int64 // rows [lo, hi), in groups [first, first+groups)
	lo, hi  int64
	first   int
	rows    int                // the points a chunk gathers at least (small groups)
	recycle chan pointio.Chunk // chunks handed back, for the readers to fill again
	groups  int
	out     []chan groupChunk
	next    int
	cancel  context.CancelFunc
	done    error
}

// groupChunk is one row group's points, or the error reading it.
type groupChunk struct {
	c   pointio.Chunk
	err error
}

// chunkReaders is the most row groups read side by side by default: each
// reader holds a group (2^20 rows are 32 MB as points and radians). Four
// read 2^27 points written by pyarrow (groups of 2^20) in 2.2-2.9 s on a
// 32-core host, the stream's slowest stage beside GPUs.
const chunkReaders = 8

func openParquetChunks(path string, opts pointio.ReadOptions, chunkRows, workers int) (pointio.ChunkReader, error) {
	return openParquetRange(path, opts, chunkRows, workers, 0, -1)
}

// openParquetRange reads the row groups that hold rows [lo, hi) (hi < 0:
// to the end), the chunks cut to them.
func openParquetRange(path string, opts pointio.ReadOptions, chunkRows, workers int, lo, hi int64) (_ pointio.ChunkReader, err error) {
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
	if workers <= 0 {
		// A reader a 4 cores: a group decodes on one core, so reading
		// keeps up with the query and the writer on a few, and each
		// reader holds about 3 groups' columns.
		workers = min(runtime.GOMAXPROCS(0)/4, chunkReaders)
	}
	workers = max(1, min(workers, g1-g0))
	ctx, cancel := context.WithCancel(context.Background())
	if chunkRows <= 0 {
		chunkRows = pointio.DefaultChunkRows
	}
	p := &parquetChunks{n: hi - lo, lo: lo, hi: hi, first: g0, rows: chunkRows, groups: g1 - g0, cancel: cancel, recycle: make(chan pointio.Chunk, workers)}
	for w := range workers {
		ch := make(chan groupChunk, 1)
		p.out = append(p.out, ch)
		ws := *src
		go ws.readAhead(ctx, g0+w, g1, workers, starts, ch, p.recycle)
	}
	return p, nil
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

// readAhead reads groups first, first+workers, ... into ch, stopping at
// the first error or when ctx is done.
// Its chunks' columns are those of chunks handed back (recycle) when there
// are some: 16 MB a group not allocated again.
func (src *columnSource) readAhead(ctx context.Context, first, end, workers int, starts []int64, ch chan<- groupChunk, recycle <-chan pointio.Chunk) {
	defer close(ch)
	rdr, fr, err := src.openGroups()
	if rdr != nil {
		defer rdr.Close()
	}
	var buf []orb.Point
	for g := first; g < end; g += workers {
		var c pointio.Chunk
		select {
		case c = <-recycle:
		default:
		}
		if err == nil {
			c, buf, err = src.readGroup(ctx, fr, g, starts, buf, c)
		}
		select {
		case ch <- groupChunk{c, err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// openGroups opens a reader of the file's row groups.
func (src *columnSource) openGroups() (rdr *file.Reader, fr *pqarrow.FileReader, err error) {
	defer recoverCorrupt(src.path, &err)
	if rdr, err = openParquetFile(src.path); err != nil {
		return nil, nil, inputError(src.path, "not a readable Parquet file", err)
	}
	fr, err = pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err != nil {
		return rdr, nil, inputError(src.path, "not a readable Parquet file", err)
	}
	return rdr, fr, nil
}

// readGroup reads row group g, checked, into a chunk of radians, through
// buf (returned for the next group).
func (src *columnSource) readGroup(ctx context.Context, fr *pqarrow.FileReader, g int, starts []int64, buf []orb.Point, reuse pointio.Chunk) (c pointio.Chunk, _ []orb.Point, err error) {
	defer recoverCorrupt(src.path, &err)
	if err := ctx.Err(); err != nil {
		return c, buf, err
	}
	tbl, err := fr.ReadRowGroups(ctx, src.leaves(fr.ParquetReader()), []int{g})
	if err != nil {
		return c, buf, inputError(src.path, fmt.Sprintf("row group %d", g), err)
	}
	defer tbl.Release()
	n := int(starts[g+1] - starts[g])
	buf = slices.Grow(buf[:0], n)[:n]
	src.base, src.ids = starts[g], nil
	if src.id != "" {
		src.ids = make([]string, n)
	}
	if err := src.decode(tbl, starts[g], buf); err != nil {
		return c, buf, err
	}
	c.Base, c.IDs = starts[g], src.ids
	c.Lat, c.Lon = pointio.AppendRadians(reuse.Lat[:0], reuse.Lon[:0], buf)
	return c, buf, nil
}

// Next returns the next row group, or consecutive small ones gathered
// into dst's columns until they hold p.rows points: a file of small groups
// (DuckDB writes 122,880 rows) still makes chunks worth a query.
func (p *parquetChunks) Next(ctx context.Context, dst pointio.Chunk) (pointio.Chunk, error) {
	c, err := p.group(ctx)
	if err != nil || c.Len() >= p.rows || p.next == p.groups {
		p.giveBack(dst)
		return c, err
	}
	out := pointio.Chunk{Base: c.Base, Lat: append(dst.Lat[:0], c.Lat...), Lon: append(dst.Lon[:0], c.Lon...), IDs: c.IDs}
	p.giveBack(c)
	for out.Len() < p.rows && p.next < p.groups {
		if c, err = p.group(ctx); err == io.EOF {
			break
		} else if err != nil {
			return pointio.Chunk{}, err
		}
		out.Lat, out.Lon = append(out.Lat, c.Lat...), append(out.Lon, c.Lon...)
		if out.IDs != nil {
			out.IDs = append(slices.Clip(out.IDs), c.IDs...)
		}
		p.giveBack(c)
	}
	return out, nil
}

// giveBack hands a chunk's columns to the readers to fill again.
func (p *parquetChunks) giveBack(c pointio.Chunk) {
	if cap(c.Lat) > 0 {
		select {
		case p.recycle <- pointio.Chunk{Lat: c.Lat[:0], Lon: c.Lon[:0]}:
		default:
		}
	}
}

// group is the next row group's rows in the range (io.EOF after the last).
func (p *parquetChunks) group(ctx context.Context) (pointio.Chunk, error) {
	for {
		if p.done != nil {
			return pointio.Chunk{}, p.done
		}
		if p.next == p.groups {
			p.done = io.EOF
			return pointio.Chunk{}, io.EOF
		}
		select {
		case r, ok := <-p.out[p.next%len(p.out)]:
			if !ok {
				r.err = fmt.Errorf("arrowio: row group %d not read", p.next)
			}
			if r.err != nil {
				p.done = r.err
				p.cancel()
				return pointio.Chunk{}, r.err
			}
			p.next++
			if c := cutChunk(r.c, p.lo, p.hi); c.Len() > 0 {
				return c, nil
			}
		case <-ctx.Done():
			return pointio.Chunk{}, ctx.Err()
		}
	}
}

func (p *parquetChunks) Rows() int64 { return p.n }

// cutChunk is the rows of c in [lo, hi).
func cutChunk(c pointio.Chunk, lo, hi int64) pointio.Chunk {
	n := int64(c.Len())
	a := min(max(lo-c.Base, 0), n)
	b := max(min(n, hi-c.Base), a)
	if a == 0 && b == int64(c.Len()) {
		return c
	}
	out := pointio.Chunk{Base: c.Base + a, Lat: c.Lat[a:b], Lon: c.Lon[a:b]}
	if c.IDs != nil {
		out.IDs = c.IDs[a:b]
	}
	return out
}

// OpenChunksRange is OpenChunks for rows [lo, hi) of path, an MPI rank's
// share of a file every rank reads: a Parquet file's row groups that hold
// them (the chunks cut to them), a .npy file's rows from lo on, other
// formats read from the start and cut (pointio.ChunkRange). Errors name
// rows in the whole file.
func OpenChunksRange(ctx context.Context, path string, opts pointio.ReadOptions, chunkRows int, lo, hi int64) (pointio.ChunkReader, error) {
	switch {
	case pointio.IsParquet(path):
		return openParquetRange(path, opts, chunkRows, 0, lo, hi)
	case strings.EqualFold(filepath.Ext(path), ".npy") && opts.IDColumn == "":
		if _, byRows, err := pointio.NPYRows(path); err == nil && byRows {
			return pointio.OpenNPYChunksRange(path, opts.Radians, chunkRows, int(lo), int(hi))
		}
	}
	r, err := OpenChunks(ctx, path, opts, chunkRows)
	if err != nil {
		return nil, err
	}
	return pointio.ChunkRange(r, lo, hi), nil
}

// Close stops the readers ahead.
func (p *parquetChunks) Close() error {
	p.cancel()
	if p.done == nil {
		p.done = fmt.Errorf("arrowio: chunk reader closed")
	}
	return nil
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

func openIPCChunks(ctx context.Context, path string, opts pointio.ReadOptions) (_ pointio.ChunkReader, err error) {
	defer recoverCorruptAs(path, "Arrow IPC", &err)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read points: %w", err)
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

func (c *ipcChunks) Next(ctx context.Context, dst pointio.Chunk) (_ pointio.Chunk, err error) {
	if c.done != nil {
		return pointio.Chunk{}, c.done
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
		return pointio.Chunk{}, err
	}
	if rows == 0 {
		if c.total == 0 {
			return pointio.Chunk{}, inputError(c.path, "no points", nil)
		}
		return pointio.Chunk{}, ipcEnd(c.path, int64(c.total), c.rows)
	}
	c.src.base, c.src.ids = int64(c.total), nil
	pts, err := c.src.decodeBatches(recs, c.total, rows)
	if err != nil {
		return pointio.Chunk{}, err
	}
	out := pointio.Chunk{Base: int64(c.total), IDs: c.src.ids}
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
