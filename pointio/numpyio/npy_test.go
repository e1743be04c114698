package numpyio

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/internal/readertest"
	"github.com/paulmach/orb"
)

// npyBytes is an array as numpy.save writes it: the version 1.0 header,
// then the elements (float64 or float32, little or big endian).
func npyBytes(descr, shape string, fortran bool, vals []float64) []byte {
	h := npyHeaderShape(descr, shape)
	if fortran {
		h = strings.Replace(h, "'fortran_order': False", "'fortran_order': True ", 1)
	}
	b := []byte(h)
	var order binary.AppendByteOrder = binary.LittleEndian
	if descr[0] == '>' {
		order = binary.BigEndian
	}
	for _, v := range vals {
		if strings.HasSuffix(descr, "f4") {
			b = order.AppendUint32(b, math.Float32bits(float32(v)))
		} else {
			b = order.AppendUint64(b, math.Float64bits(v))
		}
	}
	return b
}

func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func npzBytes(t testing.TB, arrays map[string][]byte) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, b := range arrays {
		w, err := zw.Create(name + ".npy")
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
	}
	zw.Close()
	return buf.Bytes()
}

func TestReadNumPy(t *testing.T) {
	want := []orb.Point{{8.5, 47.25}, {-73.75, 40.5}, {151.25, -33.75}}
	rows := []float64{47.25, 8.5, 40.5, -73.75, -33.75, 151.25} // (lat, lon) a row
	cols := []float64{47.25, 40.5, -33.75, 8.5, -73.75, 151.25} // Fortran order
	for _, tc := range []struct {
		name string
		body []byte
	}{
		{"a.npy", npyBytes("<f8", "(3, 2)", false, rows)},
		{"f32.npy", npyBytes("<f4", "(3, 2)", false, rows)},
		{"big.npy", npyBytes(">f8", "(3, 2)", false, rows)},
		{"fortran.npy", npyBytes("<f8", "(3, 2)", true, cols)},
		{"sniffed", npyBytes("<f8", "(3, 2)", false, rows)},
		{"columns.npz", npzBytes(t, map[string][]byte{"lat": npyBytes("<f8", "(3,)", false, cols[:3]),
			"lon": npyBytes("<f4", "(3,)", false, cols[3:]), "id": npyBytes("<f8", "(3,)", false, []float64{1, 2, 3})})},
		{"one.npz", npzBytes(t, map[string][]byte{"points": npyBytes("<f8", "(3, 2)", false, rows)})},
	} {
		got, err := readFile(writeFile(t, tc.name, tc.body))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
			t.Errorf("%s: %v, want %v", tc.name, got, want)
		}
	}
}

func TestReadNumPyErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		body []byte
		want string
	}{
		{"a.npy", npyBytes("<f8", "(2, 3)", false, make([]float64, 6)), "shape [2 3]: want (N, 2)"},
		{"b.npy", npyBytes("<i8", "(1, 2)", false, []float64{0, 0}), `dtype "<i8"`},
		{"c.npy", npyBytes("<f8", "(2, 2)", false, []float64{1, 2, 95, 3}), "c.npy: row 2: latitude 95 out of range [-90, 90]"},
		{"d.npy", npyBytes("<f8", "(2, 2)", false, []float64{1, 2, 3}), "the data ends early (24 of 32 bytes)"},
		{"e.npy", []byte("\x93NUMPY\x09\x00"), "version 9.0"},
		{"f.npy", npyBytes("<f8", "(0, 2)", false, nil), "f.npy: no points"},
		{"g.npz", npzBytes(t, map[string][]byte{"a": npyBytes("<f8", "(1,)", false, []float64{1}), "b": npyBytes("<f8", "(1,)", false, []float64{1})}),
			"no latitude or longitude column"},
		{"h.npz", []byte("not a zip"), "not a NumPy .npz archive"},
	} {
		_, err := readFile(writeFile(t, tc.name, tc.body))
		var ie *pointio.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an pointio.InputError containing %q", tc.name, err, tc.want)
		}
	}
}

// Any bytes after the NumPy magic give points or an InputError.
func FuzzReadNPY(f *testing.F) {
	f.Add(npyBytes("<f8", "(2, 2)", false, []float64{1, 2, 3, 4}))
	f.Add(npyBytes(">f4", "(1, 2)", true, []float64{1, 2}))
	f.Fuzz(func(t *testing.T, data []byte) {
		pts, err := ReadNPY(bytes.NewReader(data), "fuzz.npy", int64(len(data)), false)
		readertest.CheckResult(t, pts, err)
	})
}

// Headers that claim more than they hold cost no more than the file: a
// shape whose size overflows, and an archive entry that declares 64 GiB.
func TestReadNumPyHostileSizes(t *testing.T) {
	huge := []byte(npyHeaderShape("<f8", "(4611686018427387904, 2)"))
	if _, err := readFile(writeFile(t, "a.npy", huge)); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("overflowing shape: %v", err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	body := npyBytes("<f8", "(4294967296, 2)", false, []float64{1, 2})
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "points.npy", Method: zip.Store,
		CompressedSize64: uint64(len(body)), UncompressedSize64: 1 << 36})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(body)
	zw.Close()
	if _, err := readFile(writeFile(t, "b.npz", buf.Bytes())); err == nil {
		t.Error("a 64 GiB claim read without error")
	}
}

// --radians: NumPy arrays of radians, checked against radian bounds.
func TestReadNumPyRadians(t *testing.T) {
	path := writeFile(t, "r.npy", npyBytes("<f8", "(1, 2)", false, []float64{math.Pi / 4, -math.Pi / 2}))
	got, err := readFileWith(context.Background(), path, pointio.ReadOptions{Radians: true})
	if err != nil || math.Abs(got[0][1]-45) > 1e-12 || math.Abs(got[0][0]+90) > 1e-12 {
		t.Errorf("%v, %v", got, err)
	}
	f32 := writeFile(t, "f.npy", npyBytes("<f4", "(1, 2)", false, []float64{float64(float32(math.Pi / 2)), float64(float32(math.Pi))}))
	if got, err := readFileWith(context.Background(), f32, pointio.ReadOptions{Radians: true}); err != nil || got[0] != (orb.Point{180, 90}) {
		t.Errorf("float32 pole and antimeridian: %v, %v", got, err)
	}
	bad := writeFile(t, "s.npy", npyBytes("<f8", "(1, 2)", false, []float64{2, 0}))
	if _, err := readFileWith(context.Background(), bad, pointio.ReadOptions{Radians: true}); err == nil || !strings.Contains(err.Error(), "row 1: latitude 2 out of range [-1.570796, 1.570796] (radians") {
		t.Errorf("2 rad: %v", err)
	}
}

// A .npz archive of any bytes gives points or an InputError.
func FuzzReadNPZ(f *testing.F) {
	f.Add(npzBytes(f, map[string][]byte{"lat": npyBytes("<f8", "(2,)", false, []float64{1, 2}), "lon": npyBytes("<f4", "(2,)", false, []float64{3, 4})}))
	f.Add(npzBytes(f, map[string][]byte{"points": npyBytes("<f8", "(1, 2)", false, []float64{1, 2})}))
	f.Fuzz(func(t *testing.T, data []byte) {
		pts, err := readNPZ(bytes.NewReader(data), int64(len(data)), "fuzz.npz", pointio.ReadOptions{})
		readertest.CheckResult(t, pts, err)
	})
}
