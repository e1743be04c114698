package index

import (
	"math"
	"testing"
)

// Unit and ChordToAngle give the same bits on every build (these are
// amd64's at GOAMD64=v1, where they equal math.Sincos's and the GPU's
// twins'): .ci/run runs this built for GOAMD64=v3 too, where the compiler
// fuses multiply-adds that no explicit conversion forbids.
func TestUnitBitsOnEveryBuild(t *testing.T) {
	for _, c := range []struct {
		lat, lon       float64
		x, y, z, gcRad uint64
	}{
		{0.7853981633974483, -2.356194490192345, 0xbfe0000000000000, 0xbfe0000000000001, 0x3fe6a09e667f3bcc, 0x3ff4d481b125b1db},
		{-1.2, 3, 0xbfd6f574ca0ea72e, 0x3faa2e7d0f6818cd, 0xbfedd343a21a55c5, 0x4006e32b90f325d4},
		{0.3, 0.1, 0x3fee6b04bea982b8, 0x3fb86a76af18fc19, 0x3fd2e9cd95baba33, 0x3fe43aa2c34f6b6b},
		{1.5707963267948966, 6.2, 0x3c919686a112ca68, 0xbc577690abfdbb9f, 0x3ff0000000000000, 0x3fe4978fa3269edf},
		{-0.001, 1e-09, 0x3feffffef390876c, 0x3e112e0b58095a67, 0xbf50624da5218a62, 0x3fedb4982c4b3424},
		// math.Sincos built for GOAMD64=v3 rounds this cosine the other way.
		{-0.8185000683596773, 0.8185000683596773, 0x3fdde20df242076b, 0x3fdfee0dd3f87344, 0xbfe75d283b03beff, 0x3ffe12f2dae5debd},
	} {
		x, y, z := Unit(c.lat, c.lon)
		a := ChordToAngle(Chord2(x, y, z, 0.6, 0, 0.8))
		if got := [4]uint64{math.Float64bits(x), math.Float64bits(y), math.Float64bits(z), math.Float64bits(a)}; got != [4]uint64{c.x, c.y, c.z, c.gcRad} {
			t.Errorf("(%v, %v): bits %#x, want %#x", c.lat, c.lon, got, [4]uint64{c.x, c.y, c.z, c.gcRad})
		}
	}
}
