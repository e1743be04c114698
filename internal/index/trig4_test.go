package index

import (
	"math"
	"math/rand/v2"
	"testing"
)

// unit4 gives unit's bits exactly, lane by lane: at the octant boundaries
// of math.Sincos's reduction and their neighbours, signed zeros, tiny and
// subnormal values, the range ends and random points (and arguments far
// beyond the checked ranges, which the assembly also reduces as math does).
func TestUnit4MatchesUnit(t *testing.T) {
	var vals []float64
	for k := -16; k <= 16; k++ {
		v := float64(k) * math.Pi / 4
		vals = append(vals, v, math.Nextafter(v, math.Inf(1)), math.Nextafter(v, math.Inf(-1)))
	}
	vals = append(vals, 0, math.Copysign(0, -1), 5e-324, -5e-324, 1e-300, -1e-300, 0x1p-27, math.Pi/2+1e-12,
		-math.Pi/2-1e-12, math.Pi+1e-12, -math.Pi-1e-12, 1000.5, -123456.789, 1<<28+0.5)
	r := rand.New(rand.NewPCG(5, 6))
	for range 200000 {
		vals = append(vals, (2*r.Float64()-1)*math.Pi, (2*r.Float64()-1)*math.Pi/2)
	}
	for i := 0; i+4 <= len(vals); i += 2 {
		var lat, lon [4]float64
		for e := range 4 {
			lat[e], lon[e] = vals[(i+e)%len(vals)], vals[(i+3*e+1)%len(vals)]
		}
		var got [12]float64
		Unit4(&lat, &lon, &got)
		for e := range 4 {
			x, y, z := Unit(lat[e], lon[e])
			if math.Float64bits(got[e]) != math.Float64bits(x) || math.Float64bits(got[4+e]) != math.Float64bits(y) ||
				math.Float64bits(got[8+e]) != math.Float64bits(z) {
				t.Fatalf("unit(%v, %v): unit4 %v %v %v, unit %v %v %v", lat[e], lon[e], got[e], got[4+e], got[8+e], x, y, z)
			}
		}
	}
}

// chordToAngle4 gives ChordToAngle's bits: from zero through 2^-26 and
// its neighbours, around asin's branch at 0.5, to antipodes.
func TestChordToAngle4MatchesScalar(t *testing.T) {
	vals := []float64{0, 5e-324, 1e-300, 4, 4 + 1e-15, 1, 1 - 1e-16, 1 + 1e-16, 0.999999999, 3.9999}
	for _, h := range []float64{0x1p-26, 0.5} {
		d := 4 * h * h
		vals = append(vals, d, math.Nextafter(d, 0), math.Nextafter(d, 5))
	}
	r := rand.New(rand.NewPCG(7, 8))
	for range 100000 {
		vals = append(vals, 4*r.Float64(), 1e-6*r.Float64(), math.Pow(10, -20*r.Float64()))
	}
	for i := 0; i+4 <= len(vals); i++ {
		d2 := [4]float64{vals[i], vals[i+1], vals[i+2], vals[i+3]}
		var got [4]float64
		ChordToAngle4(&d2, &got)
		for e := range 4 {
			if want := ChordToAngle(d2[e]); math.Float64bits(got[e]) != math.Float64bits(want) {
				t.Fatalf("ChordToAngle(%v): chordToAngle4 %v, scalar %v", d2[e], got[e], want)
			}
		}
	}
}

func BenchmarkUnit4(b *testing.B) {
	lat, lon := [4]float64{0.1, -0.7, 1.2, -1.5}, [4]float64{2.9, -3.1, 0.3, -1.1}
	var out [12]float64
	for b.Loop() {
		Unit4(&lat, &lon, &out)
	}
}

func BenchmarkUnit(b *testing.B) {
	lat, lon := [4]float64{0.1, -0.7, 1.2, -1.5}, [4]float64{2.9, -3.1, 0.3, -1.1}
	var out [12]float64
	for b.Loop() {
		Unit4Go(&lat, &lon, &out)
	}
}
