package pointio

import (
	"archive/zip"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"
)

// WriteResultsNPZ writes n answers as a NumPy .npz archive (what
// numpy.savez writes, uncompressed) holding two arrays of length n:
// "ref_index" (uint32, '<u4') and "distance_m" (float64, '<f8'), where
// answer(i) gives observation i's. It is the binary form of WriteResults for
// large outputs: 12 bytes an observation, read back with
// numpy.load("file.npz")["ref_index"].
func WriteResultsNPZ(w io.Writer, n int, answer func(i int) (uint32, float64)) error {
	if n < 0 {
		return fmt.Errorf("npz: negative length %d", n)
	}
	zw := zip.NewWriter(w)
	const chunk = 1 << 16
	buf := make([]byte, 8*chunk)
	for _, a := range []struct {
		name, descr string
		size        int
		put         func(b []byte, i int)
	}{
		{"ref_index", "<u4", 4, func(b []byte, i int) {
			idx, _ := answer(i)
			binary.LittleEndian.PutUint32(b, idx)
		}},
		{"distance_m", "<f8", 8, func(b []byte, i int) {
			_, d := answer(i)
			binary.LittleEndian.PutUint64(b, math.Float64bits(d))
		}},
	} {
		f, err := zw.CreateHeader(&zip.FileHeader{Name: a.name + ".npy", Method: zip.Store})
		if err != nil {
			return fmt.Errorf("npz: %w", err)
		}
		if _, err := io.WriteString(f, npyHeader(a.descr, n)); err != nil {
			return fmt.Errorf("npz: %w", err)
		}
		for lo := 0; lo < n; lo += chunk {
			hi := min(lo+chunk, n)
			for i := lo; i < hi; i++ {
				a.put(buf[(i-lo)*a.size:], i)
			}
			if _, err := f.Write(buf[:(hi-lo)*a.size]); err != nil {
				return fmt.Errorf("npz: %w", err)
			}
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("npz: %w", err)
	}
	return nil
}

// npyHeader is the NPY format 1.0 header of a one-dimensional array: the
// magic string, the version, the header length and a Python dict literal,
// padded with spaces and a newline so the data starts on a 64-byte boundary.
func npyHeader(descr string, n int) string {
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }", descr, n)
	const prefix = 10 // magic (6), version (2), header length (2)
	total := (prefix + len(dict) + 1 + 63) / 64 * 64
	dict += strings.Repeat(" ", total-prefix-len(dict)-1) + "\n"
	var h [prefix]byte
	copy(h[:], "\x93NUMPY\x01\x00")
	binary.LittleEndian.PutUint16(h[8:], uint16(len(dict)))
	return string(h[:]) + dict
}
