package numpyio

import (
	"context"
	"errors"
	"math"
	"strconv"
	"testing"

	"github.com/geoknn/geoknn/pointio"
)

// The block reader gives the general reader's radians and errors, bit for
// bit and word for word.
func TestReadNPYRadiansMatchesGeneral(t *testing.T) {
	vals := make([]float64, 0, 2*70001)
	for i := range 70001 {
		vals = append(vals, float64(i%179)-89.123456789, float64(i%359)-179.987654321)
	}
	big := func(i int, v float64) []float64 { c := append([]float64(nil), vals...); c[i] = v; return c }
	full := npyBytes("<f8", "(70001, 2)", false, vals)
	for _, tc := range []struct {
		name    string
		data    []byte
		radians bool
	}{
		{"float64", full, false},
		{"float32", npyBytes("<f4", "(70001, 2)", false, vals), false},
		{"big-endian", npyBytes(">f8", "(70001, 2)", false, vals), false},
		{"radians", npyBytes("<f8", "(3, 2)", false, []float64{math.Pi / 2, -math.Pi, 0.1, 0.2, -1, 3}), true},
		{"float32 radians at the poles", npyBytes("<f4", "(2, 2)", false, []float64{math.Pi / 2, math.Pi, -math.Pi / 2, -math.Pi}), true},
		{"bad latitude", npyBytes("<f8", "(70001, 2)", false, big(2*65537, 91)), false},
		{"bad longitude late", npyBytes("<f8", "(70001, 2)", false, big(2*70000+1, math.NaN())), false},
		{"truncated", full[:len(full)-5], false},
		{"no rows", npyBytes("<f8", "(0, 2)", false, nil), false},
		{"Fortran order", npyBytes("<f8", "(3, 2)", true, []float64{1, 2, 3, 4, 5, 6}), false},
		{"wrong shape", npyBytes("<f8", "(3, 3)", false, make([]float64, 9)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, strconv.Quote(tc.name)[1:4]+".npy", tc.data)
			opts := pointio.ReadOptions{Radians: tc.radians}
			lat, lon, _, err := readFileRadians(context.Background(), path, opts)
			pts, werr := readFileWith(context.Background(), path, opts)
			if (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
				t.Fatalf("error %v, general reader %v", err, werr)
			}
			var ie *pointio.InputError
			if err != nil && !errors.As(err, &ie) {
				t.Errorf("error %v is not an pointio.InputError", err)
			}
			wantLat, wantLon := pointio.AppendRadians(nil, nil, pts)
			if len(lat) != len(wantLat) {
				t.Fatalf("%d rows, general reader %d", len(lat), len(wantLat))
			}
			for i := range lat {
				if lat[i] != wantLat[i] || lon[i] != wantLon[i] {
					t.Fatalf("row %d: (%v, %v), general reader (%v, %v)", i, lat[i], lon[i], wantLat[i], wantLon[i])
				}
			}
		})
	}
}

// Rows read in ranges, as MPI ranks read their shares, are the whole file's;
// a bad row is named by its place in the whole file.
func TestReadNPYRadiansRows(t *testing.T) {
	vals := make([]float64, 0, 2*5000)
	for i := range 5000 {
		vals = append(vals, float64(i%179)-89.5, float64(i%359)-179.25)
	}
	path := writeFile(t, "rows.npy", npyBytes("<f8", "(5000, 2)", false, vals))
	n, byRows, err := NPYRows(path)
	if err != nil || !byRows || n != 5000 {
		t.Fatalf("NPYRows = %d, %v, %v", n, byRows, err)
	}
	lat, lon, _, err := readFileRadians(context.Background(), path, pointio.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]int{{0, 1234}, {1234, 1234}, {1234, 4999}, {4999, 5000}} {
		la, lo, err := ReadNPYRadiansRows(context.Background(), path, false, r[0], r[1])
		if err != nil || len(la) != r[1]-r[0] {
			t.Fatalf("rows %v: %d rows, %v", r, len(la), err)
		}
		for i := range la {
			if la[i] != lat[r[0]+i] || lo[i] != lon[r[0]+i] {
				t.Fatalf("rows %v: row %d differs from the whole file's", r, r[0]+i)
			}
		}
	}
	vals[2*3000] = 91
	bad := writeFile(t, "bad.npy", npyBytes("<f8", "(5000, 2)", false, vals))
	_, _, _, whole := readFileRadians(context.Background(), bad, pointio.ReadOptions{})
	_, _, part := ReadNPYRadiansRows(context.Background(), bad, false, 2500, 5000)
	if whole == nil || part == nil || whole.Error() != part.Error() {
		t.Errorf("bad row: whole file %v, rows [2500, 5000) %v", whole, part)
	}
	if _, _, err := ReadNPYRadiansRows(context.Background(), path, false, 10, 5001); err == nil {
		t.Error("rows past the end: no error")
	}
	fortran := writeFile(t, "f.npy", npyBytes("<f8", "(3, 2)", true, []float64{1, 2, 3, 4, 5, 6}))
	if _, byRows, err := NPYRows(fortran); byRows || err != nil {
		t.Errorf("Fortran order: by rows %v, %v", byRows, err)
	}
}
