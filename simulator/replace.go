package simulator

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"sync"

	"github.com/geoknn/geoknn/sphere"
)

// replaceCount is how many of the first n points a replacement of fraction
// frac replaces: round(frac*n). Blocks replace the difference of it at their
// ends, so the counts add up to exactly round(frac*n) overall.
func replaceCount(frac float64, n int) int {
	return int(math.Round(frac * float64(n)))
}

// replacer replaces a fraction of the observations with fresh points at
// every step.
type replacer struct {
	frac    float64
	gen     sphere.Generator
	seed    uint64
	workers int
	// Per-worker scratch: a permutation of a block's slots and the fresh
	// points.
	scratch sync.Pool
}

type replaceScratch struct {
	bits     []uint64 // one bit per slot of a block
	lat, lon []float64
}

func newReplacer(frac float64, gen sphere.Generator, seed uint64, workers int) *replacer {
	r := &replacer{frac: frac, gen: gen, seed: seed, workers: workers}
	r.scratch.New = func() any {
		return &replaceScratch{bits: make([]uint64, sphere.BlockSize/64), lat: make([]float64, sphere.BlockSize), lon: make([]float64, sphere.BlockSize)}
	}
	return r
}

// replace overwrites round(frac*n) of the points lat[:n], lon[:n] with
// fresh points for the given step, and writes the indices of the replaced
// slots, in increasing order, to slots (which must hold round(frac*n)
// entries). Within each block of sphere.BlockSize points, the block's share of
// slots is drawn without replacement (Floyd's algorithm) and
// the fresh points are generated from a PCG stream of its own, keyed by
// (seed, step, block): the result depends on neither the number of
// goroutines nor the order in which blocks run.
func (r *replacer) replace(step int, lat, lon []float64, slots []uint32) {
	newLat, newLon := make([]float64, len(slots)), make([]float64, len(slots))
	r.draw(step, len(lat), slots, newLat, newLon)
	for k, i := range slots {
		lat[i], lon[i] = newLat[k], newLon[k]
	}
}

// draw is replace without the writes: it fills slots and the fresh points
// newLat[k], newLon[k] that slot slots[k] of n points gets, leaving the
// points themselves alone (so the simulation can draw the next step's
// replacements while the current step's query still reads them).
func (r *replacer) draw(step, n int, slots []uint32, newLat, newLon []float64) {
	stream := streamReplace ^ sphere.Mix64(uint64(step))
	sphere.ForBlocks(n, r.seed, stream, r.workers, func(rng *rand.Rand, lo, hi, _ int) {
		off := replaceCount(r.frac, lo)
		k := replaceCount(r.frac, hi) - off
		if k == 0 {
			return
		}
		s := r.scratch.Get().(*replaceScratch)
		defer r.scratch.Put(s)
		// Floyd's algorithm draws k distinct slots of the m in the block;
		// the bit set then lists them in increasing order.
		m := hi - lo
		set := s.bits[:(m+63)/64]
		clear(set)
		for j := m - k; j < m; j++ {
			x := rng.IntN(j + 1)
			if set[x/64]&(1<<(x%64)) != 0 {
				x = j
			}
			set[x/64] |= 1 << (x % 64)
		}
		plat, plon := s.lat[:k], s.lon[:k]
		r.gen(rng, plat, plon)
		j := 0
		for w, word := range set {
			for word != 0 {
				i := lo + 64*w + bits.TrailingZeros64(word)
				word &= word - 1
				newLat[off+j], newLon[off+j] = plat[j], plon[j]
				slots[off+j] = uint32(i)
				j++
			}
		}
	})
}

func checkFraction(frac float64) error {
	if !(frac >= 0 && frac <= 1) {
		return fmt.Errorf("simulator: replacement fraction %v is not in [0, 1]", frac)
	}
	return nil
}
