package pointio

import (
	"archive/zip"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// WriteResultsNPZ writes n answers as a NumPy .npz archive (what
// numpy.savez writes, uncompressed) holding two arrays of length n:
// "ref_index" (uint32, '<u4') and "distance_m" (float64, '<f8'), where
// answer(i) gives observation i's. It is the binary form of WriteResults for
// large outputs: 12 bytes an observation, read back with
// numpy.load("file.npz")["ref_index"]. answer is called from several
// goroutines at once (blocks are encoded on every core, ahead of the
// writes), so it must be safe for concurrent use, as reading result slices
// is.
func WriteResultsNPZ(w io.Writer, n int, answer func(i int) (uint32, float64)) error {
	if n < 0 {
		return fmt.Errorf("npz: negative length %d", n)
	}
	zw := zip.NewWriter(w)
	for _, a := range resultArrays(answer) {
		if err := writeNPY(zw, a, n); err != nil {
			return fmt.Errorf("npz: %w", err)
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("npz: %w", err)
	}
	return nil
}

// npyChunk is the number of elements encoded before each write.
const npyChunk = 1 << 18

// npyArray is one array of an archive: its name, its NumPy dtype descr and
// element size in bytes, and put, which encodes element i into b.
type npyArray struct {
	name, descr string
	size        int
	put         func(b []byte, i int)
}

// resultArrays returns the arrays of WriteResultsNPZ's archive.
func resultArrays(answer func(i int) (uint32, float64)) []npyArray {
	return []npyArray{
		{"ref_index", "<u4", 4, func(b []byte, i int) {
			idx, _ := answer(i)
			binary.LittleEndian.PutUint32(b, idx)
		}},
		{"distance_m", "<f8", 8, func(b []byte, i int) {
			_, d := answer(i)
			binary.LittleEndian.PutUint64(b, math.Float64bits(d))
		}},
	}
}

// writeNPY adds the n elements of a to zw as an uncompressed .npy file,
// encoded npyChunk at a time on every core (answer must be safe for
// concurrent use, as reading result slices is).
func writeNPY(zw *zip.Writer, a npyArray, n int) error {
	return writeNPYShape(zw, a, n, fmt.Sprintf("(%d,)", n))
}

// writeNPYShape is writeNPY for n elements of the given NumPy shape.
func writeNPYShape(zw *zip.Writer, a npyArray, n int, shape string) error {
	f, err := zw.CreateHeader(&zip.FileHeader{Name: a.name + ".npy", Method: zip.Store})
	if err != nil {
		return err
	}
	if _, err := io.WriteString(f, npyHeaderShape(a.descr, shape)); err != nil {
		return err
	}
	return writeBlocks(f, n, npyChunk, func(dst []byte, lo, hi int) ([]byte, error) {
		dst = slices.Grow(dst[:0], (hi-lo)*a.size)[:(hi-lo)*a.size]
		for i := lo; i < hi; i++ {
			a.put(dst[(i-lo)*a.size:], i)
		}
		return dst, nil
	})
}

// npyHeaderShape is the NPY format 1.0 header of an array of the given shape
// (a Python tuple literal such as "(5,)" or "(5, 3)"): the magic string, the
// version, the header length and a Python dict literal, padded with spaces
// and a newline so the data starts on a 64-byte boundary.
func npyHeaderShape(descr, shape string) string {
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape)
	const prefix = 10 // magic (6), version (2), header length (2)
	total := (prefix + len(dict) + 1 + 63) / 64 * 64
	dict += strings.Repeat(" ", total-prefix-len(dict)-1) + "\n"
	var h [prefix]byte
	copy(h[:], "\x93NUMPY\x01\x00")
	binary.LittleEndian.PutUint16(h[8:], uint16(len(dict)))
	return string(h[:]) + dict
}

// NPZColumn is one array of WriteNPZ's archive: its name, NumPy dtype
// descr ("<i8", "<u4", "<f8", "<U12", ...), element size in bytes, and
// Put, which encodes element i into b (Size bytes).
type NPZColumn struct {
	Name, Descr string
	Size        int
	Put         func(b []byte, i int)
}

// WriteNPZ writes n elements of each column as a NumPy .npz archive (what
// numpy.savez writes, uncompressed).
func WriteNPZ(w io.Writer, n int, cols []NPZColumn) error {
	zw := zip.NewWriter(w)
	for _, c := range cols {
		if err := writeNPY(zw, npyArray{c.Name, c.Descr, c.Size, c.Put}, n); err != nil {
			return fmt.Errorf("npz: %w", err)
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("npz: %w", err)
	}
	return nil
}

// StringColumn is an NPZColumn of text: NumPy's fixed-width unicode
// ('<U' and the longest string's length in code points, UTF-32LE).
func StringColumn(name string, vals []string) NPZColumn {
	width := 1
	for _, v := range vals {
		width = max(width, utf8.RuneCountInString(v))
	}
	return NPZColumn{Name: name, Descr: fmt.Sprintf("<U%d", width), Size: 4 * width, Put: func(b []byte, i int) {
		clear(b[:4*width])
		k := 0
		for _, r := range vals[i] {
			binary.LittleEndian.PutUint32(b[4*k:], uint32(r))
			k++
		}
	}}
}
