package simulator

import (
	"fmt"

	"github.com/geoknn/geoknn/internal/parallel"
	"github.com/geoknn/geoknn/sphere"
)

// replacer replaces a fraction of the observations with fresh points at
// every step, for observation generators without an indexed form
// (clustered): which observations is sphere.Replacement's draw, as inside a
// session, and the fresh points come from the generator's block form.
type replacer struct {
	frac    float64
	gen     sphere.Generator
	seed    uint64
	workers int
}

func newReplacer(frac float64, gen sphere.Generator, seed uint64, workers int) *replacer {
	return &replacer{frac: frac, gen: gen, seed: seed, workers: workers}
}

// replace overwrites round(frac*n) of the points lat[:n], lon[:n] with
// fresh points for the given step, and writes the indices of the replaced
// slots, in increasing order, to slots (which must hold round(frac*n)
// entries). The result depends on neither the number of goroutines nor the
// order in which blocks run.
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
	rep := sphere.Replacement{Fraction: r.frac, Seed: r.seed, Step: uint64(step)}
	parallel.Blocks(sphere.Blocks(n), 1, r.workers, func(_, b, _ int) {
		var set [sphere.ReplaceBlockSize / 64]uint64 // stays on the stack
		first, k := rep.BlockRange(b, n)
		if k == 0 {
			return
		}
		rep.BlockSlots(b, n, set[:], slots[first:first])
		rep.BlockPoints(r.gen, b, newLat[first:first+k], newLon[first:first+k])
	})
}

func checkFraction(frac float64) error {
	if err := sphere.CheckFraction(frac); err != nil {
		return fmt.Errorf("simulator: %w", err)
	}
	return nil
}
