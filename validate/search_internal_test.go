package validate

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/paulmach/orb"
)

// naive is the plain haversine scan that bruteForce must reproduce exactly.
func naive(obs, ref []orb.Point) ([]uint32, []float64) {
	index, dist := make([]uint32, len(obs)), make([]float64, len(obs))
	for i, o := range obs {
		best, bi := math.Inf(1), 0
		for j, r := range ref {
			if d := Haversine(o, r); d < best {
				best, bi = d, j
			}
		}
		index[i], dist[i] = uint32(bi), best
	}
	return index, dist
}

func TestBruteForceMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	random := func(n int) []orb.Point {
		pts := make([]orb.Point, n)
		for i := range pts {
			pts[i] = orb.Point{rng.Float64()*360 - 180, rng.Float64()*180 - 90}
		}
		return pts
	}
	// A whole-degree lattice (poles and antimeridian included) with
	// observations on and half-way between its nodes makes many exact and
	// near ties.
	var lattice, between []orb.Point
	for lat := -90.0; lat <= 90; lat += 10 {
		for lon := -180.0; lon <= 180; lon += 10 {
			lattice = append(lattice, orb.Point{lon, lat})
			between = append(between, orb.Point{lon + 5, lat}, orb.Point{lon, lat + 5}, orb.Point{lon + 5, lat + 5})
		}
	}
	between = append(between, lattice...)
	// Tiny clusters: distances of millimetres.
	tiny := make([]orb.Point, 600)
	for i := range tiny {
		tiny[i] = orb.Point{179.9999999 + rng.NormFloat64()*1e-7, 45 + rng.NormFloat64()*1e-7}
		if tiny[i][0] > 180 {
			tiny[i][0] -= 360
		}
	}

	tests := []struct {
		name     string
		obs, ref []orb.Point
		workers  int
	}{
		{"random", random(300), random(3000), 2},
		{"lattice", between, lattice, 3},
		{"tiny", tiny[:300], tiny[300:], 2},
		// Few observations and many workers split the references.
		{"split references", random(3), random(200000), 16},
		{"one observation", random(1), random(70000), 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantIdx, wantDist := naive(tt.obs, tt.ref)
			for _, w := range []int{1, tt.workers} {
				index, dist, err := bruteForce(context.Background(), tt.obs, tt.ref, w)
				if err != nil {
					t.Fatal(err)
				}
				for i := range tt.obs {
					if index[i] != wantIdx[i] || dist[i] != wantDist[i] {
						t.Fatalf("workers %d, obs %d %v: got %d at %g, want %d at %g",
							w, i, tt.obs[i], index[i], dist[i], wantIdx[i], wantDist[i])
					}
				}
			}
		})
	}
}

func TestSample(t *testing.T) {
	for _, tt := range []struct{ n, k int }{{10, 1}, {10, 9}, {1000, 100}, {1 << 27, 1000}} {
		s := sample(tt.n, tt.k, 42)
		if len(s) != tt.k {
			t.Fatalf("sample(%d, %d) has %d values", tt.n, tt.k, len(s))
		}
		for i, v := range s {
			if v < 0 || v >= tt.n || (i > 0 && v <= s[i-1]) {
				t.Fatalf("sample(%d, %d): bad value %d at %d", tt.n, tt.k, v, i)
			}
		}
	}
}
