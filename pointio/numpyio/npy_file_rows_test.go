package numpyio

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/geoknn/geoknn/stream"
)

// npyTestRows are n rows of valid coordinates, with latitude 91 at the
// rows bad.
func npyTestRows(n int, bad ...int) []float64 {
	vals := make([]float64, 0, 2*n)
	for i := range n {
		vals = append(vals, float64(i%179)-89.123456789, float64(i%359)-179.987654321)
	}
	for _, i := range bad {
		vals[2*i] = 91
	}
	return vals
}

// readChunks reads r to its end or error, the chunks' Bases and values.
func readChunks(t *testing.T, r stream.ChunkReader) (bases []int64, lat, lon []float64, err error) {
	t.Helper()
	defer r.Close()
	for {
		c, err := r.Next(context.Background(), stream.Chunk{})
		if err != nil {
			return bases, lat, lon, err
		}
		bases, lat, lon = append(bases, c.Base), append(lat, c.Lat...), append(lon, c.Lon...)
	}
}

// streamChunks reads the file at path as a stream, named path.
func streamChunks(t *testing.T, path string, rows int) stream.ChunkReader {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	r, err := OpenNPYChunks(f, path, false, rows)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// sameChunks checks that a file read at offsets gives what the stream
// reader gives: the chunks, their values bit for bit, and the error.
func sameChunks(t *testing.T, what string, file, streamed stream.ChunkReader) error {
	t.Helper()
	b, la, lo, err := readChunks(t, file)
	wb, wla, wlo, werr := readChunks(t, streamed)
	if fmt.Sprint(err) != fmt.Sprint(werr) {
		t.Errorf("%s: error %v, the stream reader's %v", what, err, werr)
	}
	same := func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }
	if !slices.Equal(b, wb) || !slices.EqualFunc(la, wla, same) || !slices.EqualFunc(lo, wlo, same) {
		t.Errorf("%s: chunks at %v (%d rows), the stream reader's at %v (%d rows)", what, b, len(la), wb, len(wla))
	}
	return err
}

// A file read in chunks of several parts each, read and decoded on every
// core, gives the stream reader's chunks; a bad row in a later part of a
// later chunk is named in whole-file numbering, the first of two bad rows
// in one chunk as well.
func TestNPYFileChunksAsStream(t *testing.T) {
	const n, rows = 6*npyPartRows + 123, 3*npyPartRows + 17
	late, earlier := rows+2*npyPartRows+5, rows+npyPartRows+9000
	for _, descr := range []string{"<f8", "<f4", ">f8"} {
		for _, vals := range [][]float64{npyTestRows(n), npyTestRows(n, late), npyTestRows(n, late, earlier)} {
			path := writeFile(t, "rows.npy", npyBytes(descr, fmt.Sprintf("(%d, 2)", n), false, vals))
			file, err := OpenNPYFile(path, false, rows)
			if err != nil {
				t.Fatal(err)
			}
			sameChunks(t, descr, file, streamChunks(t, path, rows))
			whole, err := OpenNPYChunksRange(path, false, rows, 0, n)
			if err != nil {
				t.Fatal(err)
			}
			ranged, err := OpenNPYChunksRange(path, false, rows, npyPartRows-1, n)
			if err != nil {
				t.Fatal(err)
			}
			_, _, _, werr := readChunks(t, whole)
			if _, _, _, err := readChunks(t, ranged); fmt.Sprint(err) != fmt.Sprint(werr) {
				t.Errorf("%s: rows from %d: error %v, the whole file's %v", descr, npyPartRows-1, err, werr)
			}
		}
	}
}

// A file cut short after it was opened ends early with the stream
// reader's error, even where the chunk's first part holds a bad row.
func TestNPYFileChunksTruncated(t *testing.T) {
	const n, rows = 5*npyPartRows + 123, 3*npyPartRows + 17
	for _, cut := range []int{rows + 2*npyPartRows + 7, rows, 1} {
		data := npyBytes("<f8", fmt.Sprintf("(%d, 2)", n), false, npyTestRows(n, rows+3))
		path := writeFile(t, "cut.npy", data)
		file, err := OpenNPYFile(path, false, rows)
		if err != nil {
			t.Fatal(err)
		}
		streamed := streamChunks(t, path, rows)
		header := len(data) - 16*n
		if err := os.Truncate(path, int64(header+16*cut-3)); err != nil {
			t.Fatal(err)
		}
		err = sameChunks(t, fmt.Sprintf("cut at row %d", cut), file, streamed)
		want := fmt.Sprintf("the data ends early (%d of %d bytes)", 16*cut-3, 16*n)
		if err == nil || err == io.EOF || !strings.Contains(err.Error(), want) {
			t.Errorf("cut at row %d: %v, want %q", cut, err, want)
		}
	}
}
