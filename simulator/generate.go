package simulator

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"

	"github.com/paulmach/orb"
)

// blockSize points share one random stream. It is part of the definition of
// the output: changing it changes every generated set.
const blockSize = 1 << 14

// Stream keys keep the random streams of different uses of one seed apart.
const (
	streamPoints  = 0x243f6a8885a308d3
	streamCentres = 0x13198a2e03707344
)

// blockFunc fills lat and lon (radians, equal lengths) from rng.
type blockFunc func(rng *rand.Rand, lat, lon []float64)

// mix64 is the SplitMix64 finaliser: it turns nearby integers (seeds, block
// numbers) into unrelated PCG states.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// seedPCG seeds src for block b of the given stream.
func seedPCG(src *rand.PCG, seed, stream, b uint64) {
	src.Seed(mix64(seed^stream), mix64(b+0x9e3779b97f4a7c15))
}

// forBlocks calls fn for every block of n points on up to workers
// goroutines; fn receives a random source seeded for that block.
func forBlocks(n int, seed uint64, workers int, fn func(rng *rand.Rand, lo, hi int, w int)) {
	forStreamBlocks(n, seed, streamPoints, workers, fn)
}

// columns fills lat[:n] and lon[:n] in radians.
func columns(n int, seed uint64, workers int, f blockFunc, lat, lon []float64) error {
	if n < 0 {
		return fmt.Errorf("simulator: negative point count %d", n)
	}
	if len(lat) < n || len(lon) < n {
		return fmt.Errorf("simulator: columns hold %d latitudes and %d longitudes, want %d", len(lat), len(lon), n)
	}
	forBlocks(n, seed, workers, func(rng *rand.Rand, lo, hi, _ int) {
		f(rng, lat[lo:hi], lon[lo:hi])
	})
	return nil
}

// points returns n points in degrees: exactly the columns' radians passed
// through ToDegrees.
func points(n int, seed uint64, workers int, f blockFunc) []orb.Point {
	if n < 0 {
		return nil
	}
	pts := make([]orb.Point, n)
	workers = max(min(workers, (n+blockSize-1)/blockSize), 1)
	scratch := make([][2][blockSize]float64, workers)
	forBlocks(n, seed, workers, func(rng *rand.Rand, lo, hi, w int) {
		lat, lon := scratch[w][0][:hi-lo], scratch[w][1][:hi-lo]
		f(rng, lat, lon)
		for k := range lat {
			pts[lo+k] = ToDegrees(lat[k], lon[k])
		}
	})
	return pts
}

// ToDegrees converts a latitude and longitude in radians to an
// orb.Point{lon, lat} in degrees, clamped to [-90, 90] and [-180, 180]
// against rounding. It is the conversion linking the two forms of every
// generator.
func ToDegrees(lat, lon float64) orb.Point {
	const k = 180 / math.Pi
	return orb.Point{max(-180, min(180, lon*k)), max(-90, min(90, lat*k))}
}

func workers() int { return runtime.GOMAXPROCS(0) }

// SeedUniform returns n points with latitude uniform in degrees over
// [-90, 90) and longitude uniform over [-180, 180): the reference notebook's
// generator. Equal steps of latitude hold equal numbers of points, so the
// poles are crowded: a third of the points lie beyond 60°. It returns nil if
// n is negative.
func SeedUniform(n int, seed uint64) []orb.Point {
	return points(n, seed, workers(), seedBlock)
}

// SeedUniformRadians fills lat[:n] and lon[:n] with SeedUniform's points in
// radians.
func SeedUniformRadians(n int, seed uint64, lat, lon []float64) error {
	return columns(n, seed, workers(), seedBlock, lat, lon)
}

func seedBlock(rng *rand.Rand, lat, lon []float64) {
	for k := range lat {
		lat[k] = (rng.Float64() - 0.5) * math.Pi
		lon[k] = (2*rng.Float64() - 1) * math.Pi
	}
}

// Sphere returns n points uniform on the sphere's surface: z = sin(lat)
// uniform in [-1, 1) and longitude uniform in [-180, 180). It returns nil if
// n is negative.
func Sphere(n int, seed uint64) []orb.Point {
	return points(n, seed, workers(), sphereBlock)
}

// SphereRadians fills lat[:n] and lon[:n] with Sphere's points in radians.
func SphereRadians(n int, seed uint64, lat, lon []float64) error {
	return columns(n, seed, workers(), sphereBlock, lat, lon)
}

func sphereBlock(rng *rand.Rand, lat, lon []float64) {
	for k := range lat {
		lat[k] = math.Asin(2*rng.Float64() - 1)
		lon[k] = (2*rng.Float64() - 1) * math.Pi
	}
}
