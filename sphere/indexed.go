package sphere

import (
	"math"

	"github.com/geoknn/geoknn/internal/fdlibm"
)

// Indexed is a generator defined point by point: point i of the set drawn
// with seed is a pure function of (i, seed), in radians. It needs no
// memory and no order, so a GPU makes the same set where it is used
// (internal/kernels/generate.cu computes the same bits) and the CPU engine
// computes a point when it reaches it.
type Indexed func(i, seed uint64) (lat, lon float64)

// Stream keys of the indexed generators: the same seed gives unrelated
// sets under different generators.
const (
	streamSphere = 0x3c6ef372fe94f82b
	streamSeed   = 0xa54ff53a5f1d36f1
)

// SphereAt is point i of Sphere's set: z = sin(lat) = 2u-1 uniform in
// [-1, 1) and longitude (2v-1)π uniform in [-π, π), for the two uniforms
// Philox4x32-10 draws from (seed, i). asin and every operation round one at
// a time (the conversions forbid fused multiply-adds, even once inlined),
// so the GPU twin gets the same bits.
func SphereAt(i, seed uint64) (lat, lon float64) {
	u, v := uniforms(i, seed, streamSphere)
	return fdlibm.Asin(float64(2*u) - 1), float64(float64(float64(2*v)-1) * math.Pi)
}

// SeedUniformAt is point i of SeedUniform's set: latitude (u-1/2)π and
// longitude (2v-1)π, uniform in radians (and so in degrees).
func SeedUniformAt(i, seed uint64) (lat, lon float64) {
	u, v := uniforms(i, seed, streamSeed)
	return float64(float64(u-0.5) * math.Pi), float64(float64(float64(2*v)-1) * math.Pi)
}

// IndexedByName returns the indexed form of the generator called name:
// "sphere" (SphereAt) and "seed" (SeedUniformAt) have one; "clustered"
// does not (false).
func IndexedByName(name string) (Indexed, bool) {
	switch name {
	case "sphere":
		return SphereAt, true
	case "seed":
		return SeedUniformAt, true
	}
	return nil, false
}
