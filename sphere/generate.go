package sphere

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"

	"github.com/paulmach/orb"

	"github.com/geoknn/geoknn/internal/parallel"
)

// checkColumns reports columns too short for n points.
func checkColumns(n int, lat, lon []float64) error {
	if n < 0 {
		return fmt.Errorf("sphere: negative point count %d", n)
	}
	if len(lat) < n || len(lon) < n {
		return fmt.Errorf("sphere: columns hold %d latitudes and %d longitudes, want %d", len(lat), len(lon), n)
	}
	return nil
}

// columns fills lat[:n] and lon[:n] in radians from f's block streams.
func columns(n int, seed uint64, workers int, f Generator, lat, lon []float64) error {
	if err := checkColumns(n, lat, lon); err != nil {
		return err
	}
	ForBlocks(n, seed, streamPoints, workers, func(rng *rand.Rand, lo, hi, _ int) {
		f(rng, lat[lo:hi], lon[lo:hi])
	})
	return nil
}

// points returns n points in degrees: exactly the columns' radians passed
// through ToDegrees.
func points(n int, seed uint64, workers int, f Generator) []orb.Point {
	if n < 0 {
		return nil
	}
	pts := make([]orb.Point, n)
	workers = max(min(workers, (n+BlockSize-1)/BlockSize), 1)
	scratch := make([][2][BlockSize]float64, workers)
	ForBlocks(n, seed, streamPoints, workers, func(rng *rand.Rand, lo, hi, w int) {
		lat, lon := scratch[w][0][:hi-lo], scratch[w][1][:hi-lo]
		f(rng, lat, lon)
		for k := range lat {
			pts[lo+k] = ToDegrees(lat[k], lon[k])
		}
	})
	return pts
}

func workers() int { return runtime.GOMAXPROCS(0) }

// SeedUniform returns n points with latitude uniform in degrees over
// [-90, 90) and longitude uniform over [-180, 180): the generator the
// float32 baseline kernel (the seed algorithm) was first measured on. Equal steps of latitude hold equal numbers of points, so the
// poles are crowded: a third of the points lie beyond 60°. Point i is
// SeedUniformAt(i, seed). It returns nil if n is negative.
func SeedUniform(n int, seed uint64) []orb.Point { return indexedPoints(n, seed, SeedUniformAt) }

// SeedUniformRadians fills lat[:n] and lon[:n] with SeedUniform's points in
// radians.
func SeedUniformRadians(n int, seed uint64, lat, lon []float64) error {
	return indexedColumns(n, seed, SeedUniformAt, lat, lon)
}

// Sphere returns n points uniform on the sphere's surface: z = sin(lat)
// uniform in [-1, 1) and longitude uniform in [-180, 180). Point i is
// SphereAt(i, seed). It returns nil if n is negative.
func Sphere(n int, seed uint64) []orb.Point { return indexedPoints(n, seed, SphereAt) }

// SphereRadians fills lat[:n] and lon[:n] with Sphere's points in radians.
func SphereRadians(n int, seed uint64, lat, lon []float64) error {
	return indexedColumns(n, seed, SphereAt, lat, lon)
}

// indexedColumns fills lat[:n] and lon[:n] with points 0..n-1 of f, in
// parallel.
func indexedColumns(n int, seed uint64, f Indexed, lat, lon []float64) error {
	if err := checkColumns(n, lat, lon); err != nil {
		return err
	}
	parallel.Blocks(n, BlockSize, 0, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			lat[i], lon[i] = f(uint64(i), seed)
		}
	})
	return nil
}

// indexedPoints returns points 0..n-1 of f in degrees.
func indexedPoints(n int, seed uint64, f Indexed) []orb.Point {
	if n < 0 {
		return nil
	}
	pts := make([]orb.Point, n)
	parallel.Blocks(n, BlockSize, 0, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			pts[i] = ToDegrees(f(uint64(i), seed))
		}
	})
	return pts
}

// seedBlock and sphereBlock are the two generators' laws drawn from a
// random stream, for callers that draw fresh points in blocks of their own
// (NewGenerator).
func seedBlock(rng *rand.Rand, lat, lon []float64) {
	for k := range lat {
		lat[k] = (rng.Float64() - 0.5) * math.Pi
		lon[k] = (2*rng.Float64() - 1) * math.Pi
	}
}

func sphereBlock(rng *rand.Rand, lat, lon []float64) {
	for k := range lat {
		lat[k] = math.Asin(2*rng.Float64() - 1)
		lon[k] = (2*rng.Float64() - 1) * math.Pi
	}
}
