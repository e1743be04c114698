package numpyio

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/geoknn/geoknn/pointio"
	"github.com/paulmach/orb"
)

// WritePointsNPZ writes points as a NumPy archive of two float64 arrays
// of degrees, "lat" and "lon" (what readNPZ reads).
func WritePointsNPZ(w io.Writer, pts []orb.Point) error {
	column := func(name string, at int) npyArray {
		return npyArray{NPZColumn{name, "<f8", 8, func(b []byte, i int) {
			binary.LittleEndian.PutUint64(b, math.Float64bits(pts[i][at]))
		}}, len(pts), ""}
	}
	return writeArchive(w, []npyArray{column("lat", 1), column("lon", 0)})
}

// WritePointsNPY writes points as one NumPy array of shape (N, 2), a row
// of latitude then longitude in degrees (float64), what numpy.load reads.
func WritePointsNPY(w io.Writer, pts []orb.Point) error {
	if _, err := io.WriteString(w, npyHeaderShape("<f8", fmt.Sprintf("(%d, 2)", len(pts)))); err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	err := pointio.WriteBlocks(w, len(pts), npyChunk, func(dst []byte, lo, hi int) ([]byte, error) {
		for _, p := range pts[lo:hi] {
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(p.Lat()))
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(p.Lon()))
		}
		return dst, nil
	})
	if err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	return nil
}
