//go:build !amd64 || purego || amd64.v3

package index

// Where the AVX2 code is not built (other architectures, purego, and
// GOAMD64=v3 or above, where the compiler may fuse multiply-adds), the Go
// loops below give unit's and ChordToAngle's bits, which round every
// operation on their own (sphere.Sincos, fdlibm.Asin) on every build.

// Unit4 is unit of four points: out holds their x, then y, then z.
func Unit4(lat, lon *[4]float64, out *[12]float64) { Unit4Go(lat, lon, out) }

// ChordToAngle4 is ChordToAngle of four squared chords.
func ChordToAngle4(d2, out *[4]float64) { chordToAngle4Go(d2, out) }
