package numpyio

import (
	"archive/zip"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/geoknn/geoknn/pointio"
)

// NPZMagic starts every .npz archive: a zip archive's first local file
// header.
const NPZMagic = "PK\x03\x04"

// WriteResultsNPZ writes n answers as a NumPy .npz archive (what
// numpy.savez writes, uncompressed) holding two arrays of length n:
// "ref_index" (int32, '<i4': every reference index fits, and a missing
// reference is -1 in every format; see RefIndexDescr) and "distance_m"
// (float64, '<f8'), where
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
	return writeArchive(w, []npyArray{
		{NPZColumn{"ref_index", RefIndexDescr, 4, func(b []byte, i int) {
			idx, _ := answer(i)
			binary.LittleEndian.PutUint32(b, idx)
		}}, n, ""},
		{NPZColumn{"distance_m", "<f8", 8, func(b []byte, i int) {
			_, d := answer(i)
			binary.LittleEndian.PutUint64(b, math.Float64bits(d))
		}}, n, ""},
	})
}

// npyChunk is the number of elements encoded before each write.
const npyChunk = 1 << 18

// npyArray is one array of an archive: n elements of a column, of the
// NumPy shape given ("" for (n,)).
type npyArray struct {
	NPZColumn
	n     int
	shape string
}

// writeArchive writes arrays as a NumPy .npz archive (what numpy.savez
// writes, uncompressed), each encoded npyChunk elements at a time on every
// core (so Put must be safe for concurrent use, as reading result slices
// is).
func writeArchive(w io.Writer, arrays []npyArray) error {
	zw := zip.NewWriter(w)
	for _, a := range arrays {
		if err := writeNPY(zw, a); err != nil {
			return fmt.Errorf("npz: %w", err)
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("npz: %w", err)
	}
	return nil
}

// writeNPY adds a to zw as an uncompressed .npy file.
func writeNPY(zw *zip.Writer, a npyArray) error {
	shape := a.shape
	if shape == "" {
		shape = fmt.Sprintf("(%d,)", a.n)
	}
	f, err := zw.CreateHeader(&zip.FileHeader{Name: a.Name + ".npy", Method: zip.Store})
	if err != nil {
		return err
	}
	if _, err := io.WriteString(f, npyHeaderShape(a.Descr, shape)); err != nil {
		return err
	}
	return pointio.WriteBlocks(f, a.n, npyChunk, func(dst []byte, lo, hi int) ([]byte, error) {
		dst = slices.Grow(dst[:0], (hi-lo)*a.Size)[:(hi-lo)*a.Size]
		for i := lo; i < hi; i++ {
			a.Put(dst[(i-lo)*a.Size:], i)
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
	arrays := make([]npyArray, len(cols))
	for k, c := range cols {
		arrays[k] = npyArray{c, n, ""}
	}
	return writeArchive(w, arrays)
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

// RefIndexDescr is the NumPy type of every ref_index array knn writes:
// int32. Reference indexes are below 2^31 (more references are refused),
// and a missing reference (k nearest past --max-m) is -1, as in CSV,
// Parquet, Arrow and the Python package: its bytes are those of uint32's
// 2^32-1, which earlier archives held, so only the header changed.
const RefIndexDescr = "<i4"
