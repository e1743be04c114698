package validate_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geo"

	"github.com/geoknn/geoknn/sphere"
	"github.com/geoknn/geoknn/validate"
)

const deg = math.Pi / 180

func TestHaversineKnown(t *testing.T) {
	tests := []struct {
		name string
		a, b orb.Point
		want float64 // radians
		tol  float64
	}{
		{"same point", orb.Point{12.5, -33.25}, orb.Point{12.5, -33.25}, 0, 0},
		{"origin", orb.Point{0, 0}, orb.Point{0, 0}, 0, 0},
		{"antipodes on the equator", orb.Point{0, 0}, orb.Point{180, 0}, math.Pi, 0},
		{"antipodes off the equator", orb.Point{10, 20}, orb.Point{-170, -20}, math.Pi, 1e-7},
		{"pole to pole", orb.Point{0, 90}, orb.Point{0, -90}, math.Pi, 0},
		{"pole to pole, other longitudes", orb.Point{-45, 90}, orb.Point{135, -90}, math.Pi, 0},
		{"north pole, two longitudes", orb.Point{0, 90}, orb.Point{123, 90}, 0, 0},
		{"south pole, two longitudes", orb.Point{-180, -90}, orb.Point{17, -90}, 0, 0},
		{"pole to equator", orb.Point{40, 90}, orb.Point{-100, 0}, math.Pi / 2, 1e-15},
		{"pole to 80N", orb.Point{0, 90}, orb.Point{45, 80}, 10 * deg, 1e-15},
		{"antimeridian, same point", orb.Point{180, 0}, orb.Point{-180, 0}, 0, 0},
		{"antimeridian at 45N, same point", orb.Point{-180, 45}, orb.Point{180, 45}, 0, 0},
		{"across the antimeridian", orb.Point{179.5, 0}, orb.Point{-179.5, 0}, 1 * deg, 1e-15},
		{"one degree of latitude", orb.Point{7, 10}, orb.Point{7, 11}, 1 * deg, 1e-15},
		{"one degree of longitude on the equator", orb.Point{-1, 0}, orb.Point{0, 0}, 1 * deg, 1e-15},
		{"quarter of the equator", orb.Point{-45, 0}, orb.Point{45, 0}, math.Pi / 2, 1e-15},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, got := range []float64{validate.Haversine(tt.a, tt.b), validate.Haversine(tt.b, tt.a)} {
				if math.Abs(got-tt.want) > tt.tol {
					t.Errorf("Haversine(%v, %v) = %.17g, want %.17g ± %g", tt.a, tt.b, got, tt.want, tt.tol)
				}
			}
			if got, want := validate.HaversineMetres(tt.a, tt.b), validate.Haversine(tt.a, tt.b)*sphere.EarthRadiusMetres; got != want {
				t.Errorf("HaversineMetres = %v, want %v", got, want)
			}
		})
	}
}

// orb/geo uses the WGS84 equatorial radius and an atan2 form; rescaled to
// our radius the two must agree to well under a millimetre.
func TestHaversineMatchesOrbGeo(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := func() orb.Point { return orb.Point{rng.Float64()*360 - 180, rng.Float64()*180 - 90} }
	for range 20000 {
		a, b := random(), random()
		if rng.IntN(4) == 0 { // short distances too
			b = orb.Point{a[0] + rng.NormFloat64()*1e-3, max(-90, min(90, a[1]+rng.NormFloat64()*1e-3))}
		}
		want := geo.DistanceHaversine(a, b) / orb.EarthRadius * sphere.EarthRadiusMetres
		if got := validate.HaversineMetres(a, b); math.Abs(got-want) > 1e-4 {
			t.Fatalf("HaversineMetres(%v, %v) = %.6f, orb/geo gives %.6f", a, b, got, want)
		}
	}
}

func BenchmarkHaversine(b *testing.B) {
	p, q := orb.Point{-0.1278, 51.5074}, orb.Point{2.3522, 48.8566}
	var s float64
	for b.Loop() {
		s += validate.Haversine(p, q)
	}
	_ = s
}

func BenchmarkHaversineMetres(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	pts := make([]orb.Point, 1024)
	for i := range pts {
		pts[i] = orb.Point{rng.Float64()*360 - 180, rng.Float64()*180 - 90}
	}
	var s float64
	i := 0
	for b.Loop() {
		s += validate.HaversineMetres(pts[i&1023], pts[(i+1)&1023])
		i++
	}
	_ = s
}
