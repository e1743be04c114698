package numpyio

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/geoknn/geoknn/stream"
)

// WriteKResultsNPZ writes the k nearest references of n observations as a
// NumPy archive of two arrays of shape (n, k): "ref_index" (int32, -1
// past the references found) and "distance_m" (float64, inf there).
func WriteKResultsNPZ(w io.Writer, n, k int, row stream.KRow) error {
	shape := fmt.Sprintf("(%d, %d)", n, k)
	return writeArchive(w, []npyArray{
		{NPZColumn{"ref_index", RefIndexDescr, 4, func(b []byte, e int) {
			ref, _, ok := row(e/k, e%k)
			if !ok {
				ref = math.MaxUint32
			}
			binary.LittleEndian.PutUint32(b, ref)
		}}, n * k, shape},
		{NPZColumn{"distance_m", "<f8", 8, func(b []byte, e int) {
			_, m, ok := row(e/k, e%k)
			if !ok {
				m = math.Inf(1)
			}
			binary.LittleEndian.PutUint64(b, math.Float64bits(m))
		}}, n * k, shape},
	})
}

// WriteWithinNPZ writes a radius query's answer as a NumPy archive in CSR
// form: "counts" (uint32, n), "offsets" (uint64, n+1), and observation i's
// references ref_index[offsets[i]:offsets[i+1]] (uint32) with distance_m
// (float64, metres(e) for entry e), nearest first.
func WriteWithinNPZ(w io.Writer, counts []uint32, offsets []uint64, index []uint32, metres func(e int) float64) error {
	return writeArchive(w, []npyArray{
		{NPZColumn{"counts", "<u4", 4, func(b []byte, i int) { binary.LittleEndian.PutUint32(b, counts[i]) }}, len(counts), ""},
		{NPZColumn{"offsets", "<u8", 8, func(b []byte, i int) { binary.LittleEndian.PutUint64(b, offsets[i]) }}, len(offsets), ""},
		{NPZColumn{"ref_index", RefIndexDescr, 4, func(b []byte, e int) { binary.LittleEndian.PutUint32(b, index[e]) }}, len(index), ""},
		{NPZColumn{"distance_m", "<f8", 8, func(b []byte, e int) { binary.LittleEndian.PutUint64(b, math.Float64bits(metres(e))) }}, len(index), ""},
	})
}
