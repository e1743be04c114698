package numpyio

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/internal/check"
)

// npyBlockRows is how many rows of a .npy file are read, then converted on
// every core, at a time.
const npyBlockRows = 1 << 20

// ReadNPYRadians reads a C-order (N, 2) .npy file straight into radian
// columns, a block at a time: 16 bytes a point held, where the general
// reader holds the file, its columns and the points as well. The values
// and the errors are the general reader's. It reports false, and no error,
// for a file the general reader must read (Fortran order).
func ReadNPYRadians(ctx context.Context, path string, radians bool) (lat, lon []float64, ok bool, err error) {
	nf, ok, err := openNPYPoints(path)
	if !ok || err != nil {
		return nil, nil, false, err
	}
	defer nf.f.Close()
	if nf.n == 0 {
		return nil, nil, false, check.FileError(path, "no points")
	}
	lat, lon, err = nf.readRows(ctx, path, radians, 0, nf.n)
	return lat, lon, err == nil, err
}

// readWholeRadians reads the .npy file at path whole, as ReadNPY reads
// it, into radian columns: for a Fortran-order file, which
// ReadNPYRadians cannot read by rows.
func readWholeRadians(ctx context.Context, path string, opts pointio.ReadOptions) (lat, lon []float64, _ []string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read points: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read points: %w", err)
	}
	pts, err := ReadNPY(bufio.NewReaderSize(pointio.ContextReader(ctx, f), 1<<20), path, fi.Size(), opts.Radians)
	if err != nil {
		return nil, nil, nil, err
	}
	lat, lon = pointio.AppendRadiansParallel(nil, nil, pts)
	return lat, lon, nil, nil
}

// NPYRows is the number of points of the (N, 2) .npy file at path and
// whether ReadNPYRadiansRows reads it (C order, float64 or float32): what a
// process needs to read its own share of a file that several share.
func NPYRows(path string) (n int, byRows bool, err error) {
	nf, ok, err := openNPYPoints(path)
	if !ok || err != nil {
		return 0, false, err
	}
	nf.f.Close()
	return nf.n, true, nil
}

// ReadNPYRadiansRows reads rows [lo, hi) of the (N, 2) .npy file at path
// (one NPYRows reads by rows) into radian columns, as ReadNPYRadians
// reads the whole file: the same values, and errors naming the row in the
// whole file.
func ReadNPYRadiansRows(ctx context.Context, path string, radians bool, lo, hi int) (lat, lon []float64, err error) {
	nf, ok, err := openNPYPoints(path)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, npyError(path, fmt.Errorf("not read by rows: Fortran order"))
	}
	defer nf.f.Close()
	if lo < 0 || hi < lo || hi > nf.n {
		return nil, nil, npyError(path, fmt.Errorf("rows [%d, %d) of %d", lo, hi, nf.n))
	}
	return nf.readRows(ctx, path, radians, lo, hi)
}

// npyPoints is an open (N, 2) .npy file of points: its rows start at data,
// size bytes a value.
type npyPoints struct {
	f *os.File
	npyValues
	n    int
	data int64
}

// openNPYPoints opens and checks path's header; false, with no error, for
// a file only the general reader reads (Fortran order).
func openNPYPoints(path string) (*npyPoints, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, check.ReadError(path, err)
	}
	nf, ok, err := checkNPYPoints(f, path)
	if !ok || err != nil {
		f.Close()
	}
	return nf, ok, err
}

func checkNPYPoints(f *os.File, path string) (*npyPoints, bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, false, check.ReadError(path, err)
	}
	a, err := readNPYHeader(f)
	if err != nil {
		return nil, false, npyError(path, err)
	}
	if len(a.shape) != 2 || a.shape[1] != 2 {
		return nil, false, npyError(path, fmt.Errorf("array of shape %v: want (N, 2), latitude then longitude in degrees a row", a.shape))
	}
	vals, err := a.values()
	if err != nil {
		return nil, false, npyError(path, err)
	}
	if a.fortran || a.len() < 0 {
		return nil, false, nil
	}
	n := a.shape[0]
	at, _ := f.Seek(0, io.SeekCurrent)
	if need := int64(n) * int64(2*vals.size); fi.Size()-at < need {
		return nil, false, npyError(path, fmt.Errorf("the data ends early (%d of %d bytes)", max(fi.Size()-at, 0), need))
	}
	return &npyPoints{f: f, npyValues: vals, n: n, data: at}, true, nil
}

// readRows reads rows [lo, hi) a block at a time, converted on every core.
func (nf *npyPoints) readRows(ctx context.Context, path string, radians bool, lo, hi int) (lat, lon []float64, err error) {
	size := nf.size
	if _, err := nf.f.Seek(nf.data+int64(lo)*int64(2*size), io.SeekStart); err != nil {
		return nil, nil, check.ReadError(path, err)
	}
	lat, lon = make([]float64, hi-lo), make([]float64, hi-lo)
	raw := make([]byte, min(hi-lo, npyBlockRows)*2*size)
	rule := newNPYRule(radians)
	for b0 := 0; b0 < hi-lo; b0 += npyBlockRows {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		b1 := min(hi-lo, b0+npyBlockRows)
		block := raw[:(b1-b0)*2*size]
		if _, err := io.ReadFull(nf.f, block); err != nil {
			return nil, nil, npyError(path, err)
		}
		la, ln := lat[b0:b1], lon[b0:b1]
		if bad := decodeNPYBlock(block, la, ln, nf.npyValues, rule); bad >= 0 {
			return nil, nil, rule.err(path, lo+b0+bad, la[bad], ln[bad])
		}
	}
	return lat, lon, nil
}

// npyValues is how an array's values are stored: size bytes each, read by
// decode, or (le64, the common little-endian float64) read in line
// without a call a value.
type npyValues struct {
	size   int
	decode func([]byte) float64
	le64   bool
}

// values is how a's values are stored.
func (a npyMeta) values() (npyValues, error) {
	size, decode, err := a.elem()
	return npyValues{size: size, decode: decode, le64: size == 8 && !strings.HasPrefix(a.descr, ">")}, err
}

// decodeNPYBlock decodes the rows of block into la and ln in radians,
// checking each, on every core; it returns the first bad row (its values
// left in la and ln) or -1.
func decodeNPYBlock(block []byte, la, ln []float64, v npyValues, rule npyRule) int {
	return firstBad(len(la), func(a, b int) int {
		if bad := v.decodeRows(block[2*a*v.size:2*b*v.size], la[a:b], ln[a:b], rule); bad >= 0 {
			return a + bad
		}
		return -1
	})
}

// decodeRows decodes the rows of block into la and ln in radians, checking
// each, up to the first bad row, which it returns (its values left in la
// and ln), or -1.
func (v npyValues) decodeRows(block []byte, la, ln []float64, rule npyRule) int {
	for i := range la {
		if v.le64 {
			la[i] = math.Float64frombits(binary.LittleEndian.Uint64(block[16*i:]))
			ln[i] = math.Float64frombits(binary.LittleEndian.Uint64(block[16*i+8:]))
		} else {
			la[i], ln[i] = v.decode(block[2*i*v.size:]), v.decode(block[(2*i+1)*v.size:])
		}
		if !rule.ok(la[i], ln[i]) {
			return i
		}
		latDeg, lonDeg := rule.degrees(la[i], ln[i])
		la[i], ln[i] = latDeg*math.Pi/180, lonDeg*math.Pi/180 // as AppendRadians
	}
	return -1
}
