package pointio

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
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
	rule := newNPYRule(radians)
	for lo := 0; lo < n; lo += npyBlockRows {
		if err := ctx.Err(); err != nil {
			return nil, nil, false, err
		}
		hi := min(n, lo+npyBlockRows)
		block := raw[:(hi-lo)*2*size]
		if _, err := io.ReadFull(f, block); err != nil {
			return nil, nil, false, npyError(path, err)
		}
		la, ln := lat[lo:hi], lon[lo:hi]
		bad := firstBad(hi-lo, func(a, b int) int {
			for i := a; i < b; i++ {
				la[i], ln[i] = decode(block[2*i*size:]), decode(block[(2*i+1)*size:])
				if !rule.ok(la[i], ln[i]) {
					return i
				}
				latDeg, lonDeg := rule.degrees(la[i], ln[i])
				la[i], ln[i] = latDeg*math.Pi/180, lonDeg*math.Pi/180 // as AppendRadians
			}
			return -1
		})
		if bad >= 0 {
			return nil, nil, false, rule.err(path, lo+bad, la[bad], ln[bad])
		}
	}
	return lat, lon, true, nil
}
