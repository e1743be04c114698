package sphere

import (
	"math"
	"testing"
)

// Known-answer vectors of the Random123 distribution (kat_vectors).
func TestPhiloxKnownAnswers(t *testing.T) {
	for _, tc := range []struct {
		ctr  [4]uint32
		key  [2]uint32
		want [4]uint32
	}{
		{[4]uint32{}, [2]uint32{}, [4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
		{[4]uint32{^uint32(0), ^uint32(0), ^uint32(0), ^uint32(0)}, [2]uint32{^uint32(0), ^uint32(0)},
			[4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
		{[4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0},
			[4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
	} {
		if got := philox4x32(tc.ctr, tc.key); got != tc.want {
			t.Errorf("philox4x32(%x, %x) = %x, want %x", tc.ctr, tc.key, got, tc.want)
		}
	}
}

// The indexed sets are definitions: the GPU twin (generate.cu) and every
// earlier run rely on these bits.
func TestIndexedGolden(t *testing.T) {
	for _, tc := range []struct {
		i, seed                uint64
		sLat, sLon, uLat, uLon uint64 // SphereAt, SeedUniformAt as float64 bits
	}{
		{0, 1, 0x3fe304b03a2a1d86, 0xbfd8ca4f680c9532, 0xbff00eaa15a4e2f6, 0xbffee9ebb6bf8041},
		{12345678901, 7, 0x3ff55556c1656bc2, 0x3fe5621dec73ea80, 0xbff8e910b8328e0e, 0x3ff7e104709568e5},
		{1099511627779, 0, 0x3fc1dd0baaf462d5, 0x3fe5d043630c5098, 0x3fef361401885432, 0x3ff008d289eed99b},
	} {
		a, b := SphereAt(tc.i, tc.seed)
		c, d := SeedUniformAt(tc.i, tc.seed)
		got := [4]uint64{math.Float64bits(a), math.Float64bits(b), math.Float64bits(c), math.Float64bits(d)}
		if want := [4]uint64{tc.sLat, tc.sLon, tc.uLat, tc.uLon}; got != want {
			t.Errorf("point %d of seed %d: %x, want %x", tc.i, tc.seed, got, want)
		}
	}
}
