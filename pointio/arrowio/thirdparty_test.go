package arrowio

import (
	"context"
	"encoding/csv"
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/geoknn/geoknn/pointio"
	"github.com/paulmach/orb"
)

// airportsCSV is the real-data sample the third-party files were made from
// (testdata/python/make_formats.py): its points and IATA codes.
func airportsCSV(t *testing.T) ([]orb.Point, []string) {
	t.Helper()
	f, err := os.Open("../../testdata/realdata/airports.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var pts []orb.Point
	var codes []string
	for _, r := range rows[1:] {
		lat, err1 := strconv.ParseFloat(r[0], 64)
		lon, err2 := strconv.ParseFloat(r[1], 64)
		if err1 != nil || err2 != nil {
			t.Fatal(r)
		}
		pts, codes = append(pts, orb.Point{lon, lat}), append(codes, r[2])
	}
	return pts, codes
}

// Files written by pyarrow (GeoParquet WKB and native points, float32
// Parquet columns with zstd, LZ4-compressed Feather) read back as the CSV
// they were made from, ids included.
func TestReadPyArrowFiles(t *testing.T) {
	want, codes := airportsCSV(t)
	for _, tc := range []struct {
		file, idCol string
		opts        pointio.ReadOptions
		f32         bool
	}{
		{file: "airports_pyarrow_wkb.parquet", idCol: "iata"},
		{file: "airports_pyarrow_native.parquet", idCol: "iata"},
		{file: "airports_pyarrow_f32.parquet", idCol: "code", f32: true},
		{file: "airports_pyarrow.feather", idCol: "iata"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			opts := tc.opts
			opts.IDColumn = tc.idCol
			pts, ids, err := ReadFileIDs(context.Background(), "testdata/"+tc.file, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(pts) != len(want) {
				t.Fatalf("%d points, want %d", len(pts), len(want))
			}
			for i, p := range pts {
				w := want[i]
				if tc.f32 {
					w = orb.Point{float64(float32(w[0])), float64(float32(w[1]))}
				}
				if p != w || ids[i] != codes[i] {
					t.Fatalf("row %d: %v %q, want %v %q", i, p, ids[i], w, codes[i])
				}
			}
			lat, lon, _, err := ReadFileRadians(context.Background(), "testdata/"+tc.file, pointio.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(lat) != len(pts) || lat[7] != pts[7][1]*math.Pi/180 || lon[7] != pts[7][0]*math.Pi/180 {
				t.Errorf("radians: %d rows, row 7 (%v, %v)", len(lat), lat[7], lon[7])
			}
		})
	}
}
