package numpyio

import (
	"io"
	"slices"

	"github.com/geoknn/geoknn/internal/parallel"
)

// npyPartRows is how many rows a worker reads, then decodes, at a time:
// few enough that they are still in its core's cache when it decodes them.
const npyPartRows = 1 << 15

// npyFileRows reads a .npy file's chunks on every core: each worker reads
// a part of the chunk at its offset and decodes it right away, so that no
// one thread reads the whole chunk before the decoding starts.
type npyFileRows struct {
	f    io.ReaderAt
	data int64    // where row 0 begins
	bufs [][]byte // a worker's, kept from chunk to chunk
}

// npyPart is what a worker made of one part of a chunk.
type npyPart struct {
	got   int  // the bytes read
	short bool // fewer than the part's
	bad   int  // its first bad row in the chunk, or -1
}

// readFile reads the next len(lat) rows from the file, a part at a time
// on every core.
func (c *npyChunks) readFile(lat, lon []float64) error {
	parts := make([]npyPart, (len(lat)+npyPartRows-1)/npyPartRows)
	for len(c.file.bufs) < parallel.Workers(len(lat), npyPartRows, 0) {
		c.file.bufs = append(c.file.bufs, nil)
	}
	parallel.Blocks(len(lat), npyPartRows, 0, func(w, lo, _ int) {
		parts[lo/npyPartRows] = c.readPart(w, lo/npyPartRows, lat, lon)
	})
	return c.partsError(parts, lat, lon)
}

// readPart reads and decodes part p of the chunk into lat and lon with
// worker w's buffer.
func (c *npyChunks) readPart(w, p int, lat, lon []float64) npyPart {
	lo, hi := p*npyPartRows, min(len(lat), (p+1)*npyPartRows)
	row := 2 * c.size
	buf := slices.Grow(c.file.bufs[w][:0], (hi-lo)*row)[:(hi-lo)*row]
	c.file.bufs[w] = buf
	// A read that stops short, at the end of the file or on an error, is
	// the data ending early, as for a stream.
	got, _ := c.file.f.ReadAt(buf, c.file.data+int64(c.at+lo)*int64(row))
	if got < len(buf) {
		return npyPart{got: got, short: true, bad: -1}
	}
	bad := c.decodeRows(buf, lat[lo:hi], lon[lo:hi], c.rule)
	if bad >= 0 {
		bad += lo
	}
	return npyPart{got: got, bad: bad}
}

// partsError is the chunk's error, as reading it whole and then decoding
// it would give: the data ending early first, else the first bad row.
func (c *npyChunks) partsError(parts []npyPart, lat, lon []float64) error {
	for p, pt := range parts {
		if pt.short {
			return c.endsEarly(p*npyPartRows*2*c.size + pt.got)
		}
	}
	for _, pt := range parts {
		if pt.bad >= 0 {
			return c.rule.err(c.name, c.at+pt.bad, lat[pt.bad], lon[pt.bad])
		}
	}
	return nil
}
