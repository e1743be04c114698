package sphere

import (
	"math/rand/v2"

	"github.com/geoknn/geoknn/internal/parallel"
)

// BlockSize points share one random stream. It is part of the definition of
// every generated set: changing it changes them all.
const BlockSize = 1 << 14

// Stream keys keep the random streams of different uses of one seed apart.
const (
	streamPoints  = 0x243f6a8885a308d3
	streamCentres = 0x13198a2e03707344
)

// Generator fills lat and lon (radians, equal lengths) with points drawn
// from rng. The generators of this package are Generators at heart; their
// block form lets a caller draw fresh points from streams of its own (the
// simulator's replaced observations).
type Generator func(rng *rand.Rand, lat, lon []float64)

// Mix64 is the SplitMix64 finaliser: it turns nearby integers (seeds, block
// numbers, step numbers) into unrelated values, as stream keys need.
func Mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// seedPCG seeds src for block b of the given stream.
func seedPCG(src *rand.PCG, seed, stream, b uint64) {
	src.Seed(Mix64(seed^stream), Mix64(b+0x9e3779b97f4a7c15))
}

// ForBlocks calls fn for every block [lo, hi) of BlockSize points of [0, n)
// on up to workers goroutines (0: GOMAXPROCS); w numbers the goroutine, for
// per-goroutine scratch. Each block draws from a PCG stream seeded from
// (seed, stream, block index), so what fn draws depends on neither the
// number of goroutines nor the order the blocks run in.
func ForBlocks(n int, seed, stream uint64, workers int, fn func(rng *rand.Rand, lo, hi, w int)) {
	workers = parallel.Workers(n, BlockSize, workers)
	srcs := make([]rand.PCG, workers)
	rngs := make([]*rand.Rand, workers)
	for w := range rngs {
		rngs[w] = rand.New(&srcs[w])
	}
	parallel.Blocks(n, BlockSize, workers, func(w, lo, hi int) {
		seedPCG(&srcs[w], seed, stream, uint64(lo/BlockSize))
		fn(rngs[w], lo, hi, w)
	})
}
