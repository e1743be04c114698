// Package parallel runs loops over index ranges on several goroutines: the
// scheduling primitive the engines, the simulator and the validator share.
// Blocks starts its goroutines for each loop; a Team keeps one set awake
// across the loops of one task, which then start on every core at once.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Blocks calls fn(w, lo, hi) for every block [lo, hi) of size block (the last
// one shorter) of [0, n), on up to workers goroutines (0: GOMAXPROCS); w is
// the calling goroutine's number, in [0, workers), for per-goroutine state.
// Blocks are handed out in increasing order as goroutines free up, and their
// boundaries depend only on n and block, so results that depend only on a
// block's range are the same for any number of workers. It returns when every
// block is done.
func Blocks(n, block, workers int, fn func(w, lo, hi int)) {
	if n <= 0 {
		return
	}
	block = max(block, 1)
	blocks := (n + block - 1) / block
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, blocks)
	if workers <= 1 {
		for b := range blocks {
			fn(0, b*block, min((b+1)*block, n))
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for {
				b := int(next.Add(1) - 1)
				if b >= blocks {
					return
				}
				fn(w, b*block, min((b+1)*block, n))
			}
		})
	}
	wg.Wait()
}

// Workers is how many goroutines Blocks uses for n items in blocks of block
// with the given limit (0: GOMAXPROCS): callers size per-goroutine state
// with it.
func Workers(n, block, workers int) int {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return max(1, min(workers, (n+max(block, 1)-1)/max(block, 1)))
}
