package cpu

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/realdata"
	"github.com/geoknn/geoknn/pointio"
)

// realSetsE are the real cities and airports as radian columns.
func realSetsE(t testing.TB) (cities, airports index.Points) {
	t.Helper()
	dir, full, err := realdata.Dir()
	if err != nil {
		t.Fatal(err)
	}
	var sets [2]index.Points
	for k, name := range []string{"cities.csv", "airports.csv"} {
		pts, err := pointio.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("real data (full set: %v): %v", full, err)
		}
		p := index.Radians64(make([]float64, len(pts)), make([]float64, len(pts)))
		for i, q := range pts {
			p.Lat64[i], p.Lon64[i] = q.Lat()*math.Pi/180, q.Lon()*math.Pi/180
		}
		sets[k] = p
	}
	return sets[0], sets[1]
}
