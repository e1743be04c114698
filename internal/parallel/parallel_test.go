package parallel

import (
	"sync/atomic"
	"testing"
)

func TestBlocksCoversEveryIndexOnce(t *testing.T) {
	for _, tc := range []struct{ n, block, workers int }{
		{0, 4, 2}, {1, 4, 2}, {10, 3, 1}, {10, 3, 8}, {1000, 7, 0}, {1000, 1000, 4}, {5, 0, 3},
	} {
		hits := make([]atomic.Int32, tc.n)
		maxW := Workers(tc.n, tc.block, tc.workers)
		Blocks(tc.n, tc.block, tc.workers, func(w, lo, hi int) {
			if w < 0 || w >= maxW {
				t.Errorf("%+v: worker %d outside [0, %d)", tc, w, maxW)
			}
			if b := max(tc.block, 1); lo%b != 0 || (hi-lo != b && hi != tc.n) {
				t.Errorf("%+v: block [%d, %d) not aligned", tc, lo, hi)
			}
			for i := lo; i < hi; i++ {
				hits[i].Add(1)
			}
		})
		for i := range hits {
			if h := hits[i].Load(); h != 1 {
				t.Fatalf("%+v: index %d visited %d times", tc, i, h)
			}
		}
	}
}
