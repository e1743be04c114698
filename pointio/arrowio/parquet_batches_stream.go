package arrowio

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/stream"
	"github.com/paulmach/orb"
)

// bigGroupRows is the largest row group read whole as a chunk: a file
// with a larger one (a whole file written as one group) is read in
// batches of batchRows through one record reader instead, so a chunk
// stays small whatever the writer chose.
var bigGroupRows int64 = 1 << 22

// batchRows is the chunk size of a file read in batches.
var batchRows int64 = 1 << 20

// parquetBatches reads row groups [g0, g1) in batches, in order, the
// chunks cut to rows [lo, hi).
type parquetBatches struct {
	src    *columnSource
	rdr    *file.Reader
	rr     pqarrow.RecordReader
	base   int64 // the file's row of the next batch
	lo, hi int64
	buf    []orb.Point
	done   error
}

func openParquetBatches(src *columnSource, starts []int64, g0, g1 int, lo, hi int64) (_ stream.ChunkReader, err error) {
	defer recoverCorrupt(src.path, &err)
	rdr, fr, err := openParquetArrow(src.path, batchRows)
	if err != nil {
		return nil, err
	}
	rr, err := fr.GetRecordReader(context.Background(), src.leaves(rdr), groupRange(g0, g1))
	if err == nil {
		return &parquetBatches{src: src, rdr: rdr, rr: rr, base: starts[g0], lo: lo, hi: hi}, nil
	}
	rdr.Close()
	return nil, inputError(src.path, "not a readable Parquet file", err)
}

func groupRange(g0, g1 int) []int {
	gs := make([]int, 0, g1-g0)
	for g := g0; g < g1; g++ {
		gs = append(gs, g)
	}
	return gs
}

func (p *parquetBatches) Next(ctx context.Context, dst stream.Chunk) (c stream.Chunk, err error) {
	if p.done != nil {
		return stream.Chunk{}, p.done
	}
	defer func() {
		if err != nil {
			p.done = err
		}
	}()
	defer recoverCorrupt(p.src.path, &err)
	for {
		if err := ctx.Err(); err != nil {
			return stream.Chunk{}, err
		}
		if p.base >= p.hi || !p.rr.Next() {
			if err := p.rr.Err(); err != nil && err != io.EOF {
				return stream.Chunk{}, inputError(p.src.path, fmt.Sprintf("rows from %d", p.base+1), err)
			}
			return stream.Chunk{}, batchesEnd(p.src.path, p.base, p.hi)
		}
		c, err = p.decode(p.rr.RecordBatch(), dst)
		if err != nil || c.Len() > 0 {
			return c, err
		}
	}
}

// decode checks and converts a batch into dst's columns, cut to the range.
func (p *parquetBatches) decode(rec arrow.RecordBatch, dst stream.Chunk) (stream.Chunk, error) {
	n := int(rec.NumRows())
	tbl := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
	defer tbl.Release()
	p.buf = slices.Grow(p.buf[:0], n)[:n]
	p.src.base, p.src.ids = p.base, nil
	if p.src.id != "" {
		p.src.ids = make([]string, n)
	}
	if err := p.src.decode(tbl, p.base, p.buf); err != nil {
		return stream.Chunk{}, err
	}
	c := stream.Chunk{Base: p.base, IDs: p.src.ids}
	c.Lat, c.Lon = pointio.AppendRadiansParallel(dst.Lat[:0], dst.Lon[:0], p.buf)
	p.base += int64(n)
	return cutChunk(c, p.lo, p.hi), nil
}

func (p *parquetBatches) Rows() int64 { return p.hi - p.lo }

func (p *parquetBatches) Close() error {
	if p.done == nil {
		p.done = fmt.Errorf("arrowio: chunk reader closed")
	}
	p.rr.Release()
	return p.rdr.Close()
}
