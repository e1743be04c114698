package numpyio

import (
	"context"
	"encoding/csv"
	"os"
	"strconv"
	"testing"

	"github.com/geoknn/geoknn/pointio"
	"github.com/paulmach/orb"
)

// Files written by NumPy (np.save of (N, 2) float64 and float32 arrays,
// np.savez and np.savez_compressed of lat and lon arrays; see
// testdata/python/make_formats.py) read back as the CSV they were made
// from.
func TestReadNumPyWrittenFiles(t *testing.T) {
	f, err := os.Open("../../testdata/realdata/airports.csv")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file string
		f32  bool
	}{
		{"airports_numpy_f64.npy", false}, {"airports_numpy_f32.npy", true},
		{"airports_numpy.npz", false}, {"airports_numpy_compressed.npz", false},
	} {
		pts, err := readFileWith(context.Background(), "../testdata/"+tc.file, pointio.ReadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if len(pts) != len(rows)-1 {
			t.Fatalf("%s: %d points, want %d", tc.file, len(pts), len(rows)-1)
		}
		for i, p := range pts {
			lat, _ := strconv.ParseFloat(rows[i+1][0], 64)
			lon, _ := strconv.ParseFloat(rows[i+1][1], 64)
			w := orb.Point{lon, lat}
			if tc.f32 {
				w = orb.Point{float64(float32(lon)), float64(float32(lat))}
			}
			if p != w {
				t.Fatalf("%s row %d: %v, want %v", tc.file, i, p, w)
			}
		}
	}
}
