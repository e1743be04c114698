package pointio

import (
	"context"
	"io"

	"github.com/geoknn/geoknn/stream"
)

// DefaultChunkRows is the chunk size of the readers that choose it (CSV,
// .npy, the whole-file formats): 2^20 points, 16 MiB of radian columns.
const DefaultChunkRows = 1 << 20

// RampedRows is the size of the chunk that starts read rows into an input
// read in chunks of rows points: the first chunks are rows/8, rows/4 and
// rows/2, every later one rows. A stream's first answers then wait for
// an eighth of a chunk to be read rather than a whole one (a GPU-sized
// chunk of 2^23 points is 128 MiB of radians to read and decode before
// the first observation can be answered), while the chunks that carry
// the rest of the input keep their size. The readers of this module
// (Parquet, .npy, CSV) cut their chunks so.
func RampedRows(rows int, read int64) int {
	end := int64(0)
	for shift := 3; shift > 0; shift-- {
		if size := rows >> shift; size > 0 {
			if end += int64(size); read < end {
				return int(end - read)
			}
		}
	}
	return rows
}

// ReadWholeChunks reads path whole with read (formats.ReadFileRadians,
// say) and hands it out in chunks of chunkRows: for the formats that
// cannot be read in pieces.
func ReadWholeChunks(ctx context.Context, path string, opts ReadOptions, chunkRows int,
	read func(context.Context, string, ReadOptions) ([]float64, []float64, []string, error)) (stream.ChunkReader, error) {
	lat, lon, ids, err := read(ctx, path, opts)
	if err != nil {
		return nil, err
	}
	return &sliceChunks{lat: lat, lon: lon, ids: ids, rows: max(chunkRows, 1)}, nil
}

// sliceChunks hands out columns held whole, chunk by chunk (the chunks
// share the columns: nothing is copied).
type sliceChunks struct {
	lat, lon []float64
	ids      []string
	at, rows int
}

func (s *sliceChunks) Next(ctx context.Context, _ stream.Chunk) (stream.Chunk, error) {
	if err := ctx.Err(); err != nil {
		return stream.Chunk{}, err
	}
	if s.at >= len(s.lat) {
		return stream.Chunk{}, io.EOF
	}
	hi := min(len(s.lat), s.at+s.rows)
	c := stream.Chunk{Base: int64(s.at), Lat: s.lat[s.at:hi], Lon: s.lon[s.at:hi]}
	if s.ids != nil {
		c.IDs = s.ids[s.at:hi]
	}
	s.at = hi
	return c, nil
}

func (s *sliceChunks) Rows() int64 { return int64(len(s.lat)) }

func (s *sliceChunks) Close() error { s.lat, s.lon, s.ids = nil, nil, nil; return nil }

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
