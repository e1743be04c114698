package numpyio

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/geoknn/geoknn/internal/parallel"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/internal/check"
	"github.com/geoknn/geoknn/stream"
)

// npyChunks reads a C-order (N, 2) .npy array a row range at a time, from
// a file or a stream: the values and errors of ReadNPYRadians.
type npyChunks struct {
	r      io.Reader    // a stream, read in order
	file   *npyFileRows // or a file, read at offsets
	closer io.Closer
	name   string
	npyValues
	rule  npyRule
	n, at int
	first int // the first row read (a range's)
	rows  int
	raw   []byte
}

// OpenNPYFile opens the .npy file at path for reading in chunks of
// chunkRows points by row ranges; a Fortran-order one is read whole.
func OpenNPYFile(path string, radians bool, chunkRows int) (stream.ChunkReader, error) {
	nf, ok, err := openNPYPoints(path)
	if err != nil {
		return nil, err
	}
	if !ok {
		return pointio.ReadWholeChunks(context.Background(), path, pointio.ReadOptions{Radians: radians}, chunkRows, readWholeRadians)
	}
	if nf.n == 0 {
		nf.f.Close()
		return nil, check.FileError(path, "no points")
	}
	return &npyChunks{file: &npyFileRows{f: nf.f, data: nf.data}, closer: nf.f, name: path, npyValues: nf.npyValues,
		rule: newNPYRule(radians), n: nf.n, rows: chunkRows}, nil
}

// OpenNPYChunks reads a C-order (N, 2) .npy array from r (standard input,
// say), named name in errors, in chunks of chunkRows points (0:
// DefaultChunkRows). A Fortran-order array cannot be read in row order
// and is refused.
func OpenNPYChunks(r io.Reader, name string, radians bool, chunkRows int) (stream.ChunkReader, error) {
	if chunkRows <= 0 {
		chunkRows = pointio.DefaultChunkRows
	}
	a, err := readNPYHeader(r)
	if err != nil {
		return nil, npyError(name, err)
	}
	if len(a.shape) != 2 || a.shape[1] != 2 {
		return nil, npyError(name, fmt.Errorf("array of shape %v: want (N, 2), latitude then longitude in degrees a row", a.shape))
	}
	vals, err := a.values()
	if err != nil {
		return nil, npyError(name, err)
	}
	if a.fortran || a.len() < 0 {
		return nil, npyError(name, fmt.Errorf("a Fortran-order array from a stream: give the file's name"))
	}
	if a.shape[0] == 0 {
		return nil, check.FileError(name, "no points")
	}
	return &npyChunks{r: bufio.NewReaderSize(r, 1<<20), name: name, npyValues: vals,
		rule: newNPYRule(radians), n: a.shape[0], rows: chunkRows}, nil
}

func (c *npyChunks) Next(ctx context.Context, dst stream.Chunk) (stream.Chunk, error) {
	if err := ctx.Err(); err != nil {
		return stream.Chunk{}, err
	}
	if c.at >= c.n {
		return stream.Chunk{}, io.EOF
	}
	m := min(pointio.RampedRows(c.rows, int64(c.at-c.first)), c.n-c.at)
	// Columns made for a whole chunk, though the first chunks are smaller,
	// so that they are not made again for the later ones.
	room := min(c.rows, c.n-c.at)
	out := stream.Chunk{Base: int64(c.at), Lat: parallel.Grown(dst.Lat, m, room), Lon: parallel.Grown(dst.Lon, m, room)}
	read := c.readStream
	if c.file != nil {
		read = c.readFile
	}
	if err := read(out.Lat, out.Lon); err != nil {
		return stream.Chunk{}, err
	}
	c.at += m
	return out, nil
}

// readStream reads the next len(lat) rows in order, then decodes them on
// every core.
func (c *npyChunks) readStream(lat, lon []float64) error {
	c.raw = slices.Grow(c.raw[:0], len(lat)*2*c.size)[:len(lat)*2*c.size]
	if got, err := io.ReadFull(c.r, c.raw); err != nil {
		return c.endsEarly(got)
	}
	if bad := decodeNPYBlock(c.raw, lat, lon, c.npyValues, c.rule); bad >= 0 {
		return c.rule.err(c.name, c.at+bad, lat[bad], lon[bad])
	}
	return nil
}

// endsEarly is the error of a chunk whose first got bytes were all there
// was.
func (c *npyChunks) endsEarly(got int) error {
	need := int64(c.n) * int64(2*c.size)
	have := int64(c.at)*int64(2*c.size) + int64(got)
	return npyError(c.name, fmt.Errorf("the data ends early (%d of %d bytes)", have, need))
}

func (c *npyChunks) Rows() int64 { return int64(c.n - c.first) }

// Close closes the file, once, and lets go of the read buffers.
func (c *npyChunks) Close() error {
	closer := c.closer
	c.closer, c.raw = nil, nil
	if c.file != nil {
		c.file.bufs = nil
	}
	if closer != nil {
		return closer.Close()
	}
	return nil
}
