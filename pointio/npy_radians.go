package pointio

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"github.com/geoknn/geoknn/internal/parallel"
)

// npyBlockRows is how many rows of a .npy file are read, then converted on
// every core, at a time.
const npyBlockRows = 1 << 20

// readNPYRadians reads a C-order (N, 2) .npy file straight into radian
// columns, a block at a time: 16 bytes a point held, where the general
// reader holds the file, its columns and the points as well. The values
// and the errors are the general reader's. It reports false, and no error,
// for a file the general reader must read (Fortran order).
func readNPYRadians(ctx context.Context, path string, radians bool) (lat, lon []float64, ok bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, false, readError(path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, false, readError(path, err)
	}
	a, err := readNPYHeader(f)
	if err != nil {
		return nil, nil, false, npyError(path, err)
	}
	if len(a.shape) != 2 || a.shape[1] != 2 {
		return nil, nil, false, npyError(path, fmt.Errorf("array of shape %v: want (N, 2), latitude then longitude in degrees a row", a.shape))
	}
	size, decode, err := a.elem()
	if err != nil {
		return nil, nil, false, npyError(path, err)
	}
	if a.fortran || a.len() < 0 {
		return nil, nil, false, nil
	}
	n := a.shape[0]
	at, _ := f.Seek(0, io.SeekCurrent)
	if need := int64(n) * int64(2*size); fi.Size()-at < need {
		return nil, nil, false, npyError(path, fmt.Errorf("the data ends early (%d of %d bytes)", max(fi.Size()-at, 0), need))
	}
	if n == 0 {
		return nil, nil, false, &InputError{File: path, Feature: -1, Point: -1, Reason: "no points"}
	}
	lat, lon = make([]float64, n), make([]float64, n)
	raw := make([]byte, min(n, npyBlockRows)*2*size)
	conv := npyConverter{decode: decode, size: size, radians: radians}
	for lo := 0; lo < n; lo += npyBlockRows {
		if err := ctx.Err(); err != nil {
			return nil, nil, false, err
		}
		hi := min(n, lo+npyBlockRows)
		block := raw[:(hi-lo)*2*size]
		if _, err := io.ReadFull(f, block); err != nil {
			return nil, nil, false, npyError(path, err)
		}
		if bad := conv.convert(block, lat[lo:hi], lon[lo:hi]); bad >= 0 {
			return nil, nil, false, conv.rowError(path, lo+bad, lat[lo+bad], lon[lo+bad])
		}
	}
	return lat, lon, true, nil
}

// npyConverter turns rows of (lat, lon) elements into radians as pointsOf
// and AppendRadians do: checked, clamped in degrees, then converted.
type npyConverter struct {
	decode  func([]byte) float64
	size    int
	radians bool
}

func (c npyConverter) limits() (latMax, lonMax, scale float64) {
	if c.radians {
		return math.Pi/2 + 1e-7, math.Pi + 1e-7, 180 / math.Pi
	}
	return 90, 180, 1
}

// convert fills lat and lon from block on every core. It returns the
// lowest bad row (its raw values left in lat and lon), or -1.
func (c npyConverter) convert(block []byte, lat, lon []float64) int {
	latMax, lonMax, scale := c.limits()
	bad := make([]int, parallel.Workers(len(lat), 1<<14, 0))
	for w := range bad {
		bad[w] = len(lat)
	}
	parallel.Blocks(len(lat), 1<<14, 0, func(w, lo, hi int) {
		for i := lo; i < hi; i++ {
			la, ln := c.decode(block[2*i*c.size:]), c.decode(block[(2*i+1)*c.size:])
			if !(la >= -latMax && la <= latMax) || !(ln >= -lonMax && ln <= lonMax) {
				lat[i], lon[i] = la, ln
				bad[w] = min(bad[w], i)
				return
			}
			latDeg, lonDeg := max(-90, min(90, la*scale)), max(-180, min(180, ln*scale))
			lat[i], lon[i] = latDeg*math.Pi/180, lonDeg*math.Pi/180
		}
	})
	if i := slices.Min(bad); i < len(lat) {
		return i
	}
	return -1
}

// rowError is pointsOf's error for row i of raw values (la, ln).
func (c npyConverter) rowError(path string, i int, la, ln float64) error {
	latMax, lonMax, _ := c.limits()
	if !(la >= -latMax && la <= latMax) {
		return rowError(path, i, "lat", la, latMax, c.radians)
	}
	return rowError(path, i, "lon", ln, lonMax, c.radians)
}
