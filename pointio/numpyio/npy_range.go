package pointio

import (
	"context"
	"fmt"
	"io"

	"github.com/geoknn/geoknn/stream"
)

// ChunkRange reads rows [lo, hi) of r's input (hi < 0: to the end): the
// chunks before lo are read and dropped, the ones across lo or hi cut,
// and the reading stops at hi. Errors in the rows read are reported as r
// reports them. It is what an MPI rank reads of a file that every rank
// shares, for the formats that cannot seek to a row (the Parquet and .npy
// readers of OpenChunksRange can).
func ChunkRange(r stream.ChunkReader, lo, hi int64) stream.ChunkReader {
	return &rangeChunks{r: r, lo: lo, hi: hi}
}

type rangeChunks struct {
	r      stream.ChunkReader
	lo, hi int64
}

func (c *rangeChunks) Next(ctx context.Context, dst stream.Chunk) (stream.Chunk, error) {
	for {
		got, err := c.r.Next(ctx, dst)
		if err != nil {
			return got, err
		}
		end := got.Base + int64(got.Len())
		if c.hi >= 0 && got.Base >= c.hi {
			return stream.Chunk{}, io.EOF
		}
		if end <= c.lo {
			dst = got
			continue
		}
		if cut := cutChunk(got, c.lo, c.hi); cut.Len() > 0 {
			return cut, nil
		}
		return stream.Chunk{}, io.EOF // an empty range
	}
}

// cutChunk is the rows of c in [lo, hi) (hi < 0: no end).
func cutChunk(c stream.Chunk, lo, hi int64) stream.Chunk {
	n := int64(c.Len())
	a, b := min(max(lo-c.Base, 0), n), n
	if hi >= 0 {
		b = max(min(b, hi-c.Base), a)
	}
	out := stream.Chunk{Base: c.Base + a, Lat: c.Lat[a:b], Lon: c.Lon[a:b]}
	if c.IDs != nil {
		out.IDs = c.IDs[a:b]
	}
	return out
}

func (c *rangeChunks) Rows() int64 {
	n := c.r.Rows()
	if n < 0 {
		return -1
	}
	if c.hi >= 0 {
		n = min(n, c.hi)
	}
	return max(n-c.lo, 0)
}

func (c *rangeChunks) Close() error { return c.r.Close() }

// OpenNPYChunksRange reads rows [lo, hi) of the C-order (N, 2) .npy file
// at path in chunks, seeking to row lo: errors name the row in the whole
// file, as ReadNPYRadiansRows's do.
func OpenNPYChunksRange(path string, radians bool, chunkRows, lo, hi int) (stream.ChunkReader, error) {
	if chunkRows <= 0 {
		chunkRows = DefaultChunkRows
	}
	nf, ok, err := openNPYPoints(path)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, npyError(path, fmt.Errorf("not read by rows: Fortran order"))
	}
	if lo < 0 || hi < lo || hi > nf.n {
		nf.f.Close()
		return nil, npyError(path, fmt.Errorf("rows [%d, %d) of %d", lo, hi, nf.n))
	}
	if _, err := nf.f.Seek(nf.data+int64(lo)*int64(2*nf.size), io.SeekStart); err != nil {
		nf.f.Close()
		return nil, readError(path, err)
	}
	return &npyChunks{r: nf.f, closer: nf.f, name: path, size: nf.size, decode: nf.decode,
		rule: newNPYRule(radians), n: hi, at: lo, first: lo, rows: chunkRows}, nil
}
