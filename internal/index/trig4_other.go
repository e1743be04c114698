//go:build !amd64 || purego || amd64.v3

package index

// Built with GOAMD64=v3 or above, the compiler fuses math.Sincos's
// multiply-adds, so unit's bits are no longer those of the unfused AVX2
// code: the Go loops below keep unit4 and unit agreeing.

// Unit4 is unit of four points: out holds their x, then y, then z.
func Unit4(lat, lon *[4]float64, out *[12]float64) { Unit4Go(lat, lon, out) }

// ChordToAngle4 is ChordToAngle of four squared chords.
func ChordToAngle4(d2, out *[4]float64) { chordToAngle4Go(d2, out) }
