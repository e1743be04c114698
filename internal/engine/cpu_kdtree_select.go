package engine

import (
	"slices"

	"github.com/geoknn/geoknn/internal/parallel"
)

// The k-d tree's top splits select the median of many references, one
// node at a time, while the goroutines that build the subtrees below wait
// for them: selectNthParallel shares that selection among the subtree's
// goroutines. A sample of the keys brackets the median in a band of about
// an eighth of the references; one pass, in kdSelectChunks chunks, moves
// the references below the band, in it and above it into place, and only
// the band is selected serially. The chunks do not depend on the
// goroutines, so neither does the tree.

// kdParallelMin is the fewest references whose split selectNthParallel
// makes.
const kdParallelMin = 1 << 14

const (
	kdSelectChunks = 16   // the pass's chunks: at most its goroutines
	kdSample       = 1024 // keys sampled to bracket the median
	kdSampleBand   = 64   // sampled keys on either side of the median's rank: four of the sample's deviations
)

// selectNthParallel is selectNth on up to workers goroutines, through
// scratch (as long as pts): the same ordering around nth (smaller keys
// before it, larger after), not the same order.
func selectNthParallel(pts []kdPoint, scratch kdColumns, nth, axis, workers int) {
	n := len(pts)
	lo, hi := sampleBand(pts, nth, axis)
	chunk := (n + kdSelectChunks - 1) / kdSelectChunks
	counts := make([][3]int, (n+chunk-1)/chunk) // below, in and above the band, chunk by chunk
	parallel.Blocks(n, chunk, workers, func(_, from, to int) {
		c := &counts[from/chunk]
		for k := from; k < to; k++ {
			c[bandOf(pts[k].c[axis], lo, hi)]++
		}
	})
	var total [3]int
	for w := range counts {
		for p := range 3 {
			total[p] += counts[w][p]
		}
	}
	below, band := total[0], total[1]
	if nth < below || nth >= below+band { // the sample missed the median
		selectNth(pts, nth, axis)
		return
	}
	next := [3]int{0, below, below + band} // each chunk's first place in each part of scratch
	for w := range counts {
		c := counts[w]
		counts[w] = next
		for p := range 3 {
			next[p] += c[p]
		}
	}
	parallel.Blocks(n, chunk, workers, func(_, from, to int) {
		at := counts[from/chunk]
		for k := from; k < to; k++ {
			p := bandOf(pts[k].c[axis], lo, hi)
			scratch.set(at[p], &pts[k])
			at[p]++
		}
	})
	parallel.Blocks(n, chunk, workers, func(_, from, to int) {
		for k := from; k < to; k++ {
			pts[k] = scratch.at(k)
		}
	})
	selectNth(pts[below:below+band], nth-below, axis)
}

// bandOf is 0 below lo, 1 from lo to hi, 2 above hi.
func bandOf(key, lo, hi float64) int {
	switch {
	case key < lo:
		return 0
	case key > hi:
		return 2
	}
	return 1
}

// sampleBand is the keys kdSampleBand sampled ranks either side of nth's
// rank among kdSample keys at equal steps.
func sampleBand(pts []kdPoint, nth, axis int) (lo, hi float64) {
	n := len(pts)
	keys := make([]float64, kdSample)
	for s := range keys {
		keys[s] = pts[s*n/kdSample].c[axis]
	}
	slices.Sort(keys)
	r := nth * kdSample / n
	return keys[max(0, r-kdSampleBand)], keys[min(kdSample-1, r+kdSampleBand)]
}
