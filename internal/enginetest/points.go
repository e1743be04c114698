package enginetest

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/realdata"
	"github.com/geoknn/geoknn/pointio/formats"
	"github.com/geoknn/geoknn/sphere"
)

// SpherePoints draws n points uniform on the sphere (radians); never zeros.
func SpherePoints(n int, seed uint64) index.Points {
	lat, lon := make([]float64, n), make([]float64, n)
	if err := sphere.SphereRadians(n, seed, lat, lon); err != nil {
		panic(err)
	}
	return index.Radians64(lat, lon)
}

// FromVector appends the radians of the direction (x, y, z) to p.
func FromVector(p *index.Points, x, y, z float64) {
	n := math.Sqrt(x*x + y*y + z*z)
	p.Lat64 = append(p.Lat64, math.Asin(z/n))
	p.Lon64 = append(p.Lon64, math.Atan2(y, x))
}

// OnFaceEdges is n points on the cube map's seams: the edges and corners
// of its faces, and the edges of the cells of side cells a face edge.
func OnFaceEdges(n, side int, rng *rand.Rand) index.Points {
	var p index.Points
	for len(p.Lat64) < n {
		s := []float64{1, -1}[rng.IntN(2)]
		var u, v float64
		switch rng.IntN(3) {
		case 0: // a face edge or corner
			u, v = []float64{-1, 1}[rng.IntN(2)], []float64{-1, 1, rng.Float64()*2 - 1}[rng.IntN(3)]
		default: // a cell edge
			u, v = -1+2*float64(rng.IntN(side+1))/float64(side), rng.Float64()*2-1
		}
		c := [3]float64{s, u, v}
		a := rng.IntN(3)
		FromVector(&p, c[a], c[(a+1)%3], c[(a+2)%3])
	}
	return p
}

// RealSets are the real cities and airports as radian columns.
func RealSets(t testing.TB) (cities, airports index.Points) {
	t.Helper()
	dir, full, err := realdata.Dir()
	if err != nil {
		t.Fatal(err)
	}
	var sets [2]index.Points
	for k, name := range []string{"cities.csv", "airports.csv"} {
		pts, err := formats.ReadFile(filepath.Join(dir, name))
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

// Case is a named pair of point sets an engine is checked on.
type Case struct {
	Name     string
	Obs, Ref index.Points
}

// Cases are the point sets k nearest and radius queries are checked on:
// random, clustered, edge cases and real places (at most 2,000 of each set,
// for the oracle's sake).
func Cases(t testing.TB) []Case {
	deg := math.Pi / 180
	edgeRef := index.Radians64([]float64{90 * deg, 90 * deg, -90 * deg, 0, 0, 0, 0, 45 * deg, 45 * deg},
		[]float64{0, 0, 0, 180 * deg, -180 * deg, 0, 1e-9, 10 * deg, 10 * deg})
	edgeObs := index.Radians64([]float64{90 * deg, -90 * deg, 0, 0, 45 * deg, -45 * deg},
		[]float64{17 * deg, 0, 179.9999 * deg, 0, 10 * deg, -170 * deg}) // the last: antipode of the 45, 10 pair
	clat, clon := make([]float64, 3000), make([]float64, 3000)
	if err := sphere.ClusteredRadians(3000, 5, 8, 50, clat, clon); err != nil {
		t.Fatal(err)
	}
	cities, airports := RealSets(t)
	cities, airports = cities.Slice(0, min(2000, cities.Len())), airports.Slice(0, min(2000, airports.Len()))
	return []Case{
		{"sphere", SpherePoints(1500, 1), SpherePoints(3000, 2)},
		{"clustered references", SpherePoints(1000, 3), index.Radians64(clat, clon)},
		{"poles, antimeridian, duplicates, antipodes", edgeObs, edgeRef},
		{"airports to cities", airports, cities}, {"cities to airports", cities, airports},
	}
}
