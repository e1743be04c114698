package gpu

import (
	"runtime"
	"sync"
	"unsafe"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/memcopy"
)

// hostCrew is one GPU's share of the host's cores for a query: goroutines
// kept for the query's length that take the blocks of its host copies
// (staging observations in, answers out) as they come, from any number
// of copies at once. A copy split over a crew starts no goroutines and
// wakes none that sleep between jobs, and the copies of several jobs
// share the cores instead of queueing behind each other.
type hostCrew struct {
	blocks chan func()
	done   sync.WaitGroup
}

// crewWorkers is a GPU's share of the cores when gpus GPUs run a query.
func crewWorkers(gpus int) int { return max(1, runtime.GOMAXPROCS(0)/max(gpus, 1)) }

// newHostCrew starts a crew of workers goroutines; close stops them.
func newHostCrew(workers int) *hostCrew {
	workers = max(workers, 1)
	c := &hostCrew{blocks: make(chan func(), 4*workers)}
	for range workers {
		c.done.Go(func() {
			for fn := range c.blocks {
				fn()
			}
		})
	}
	return c
}

// close stops the crew once it has run every block handed to it.
func (c *hostCrew) close() {
	if c == nil {
		return
	}
	close(c.blocks)
	c.done.Wait()
}

// run calls fn(lo, hi) for every block [lo, hi) of size block of [0, n)
// on the crew (on the calling goroutine for a nil crew) and returns the
// error of the lowest block that failed. It must not be called from a
// crew's own block.
func (c *hostCrew) run(n, block int, fn func(lo, hi int) error) error {
	block = max(block, 1)
	if c == nil || n <= block {
		for lo := 0; lo < n; lo += block {
			if err := fn(lo, min(lo+block, n)); err != nil {
				return err
			}
		}
		return nil
	}
	blocks := (n + block - 1) / block
	errs := make([]error, blocks)
	var wg sync.WaitGroup
	wg.Add(blocks)
	for b := range blocks {
		c.blocks <- func() {
			defer wg.Done()
			errs[b] = fn(b*block, min((b+1)*block, n))
		}
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// copyBlock is the bytes one crew block copies: large enough that handing
// it over costs little beside the copy, small enough that a job's copy
// spreads over every worker.
const copyBlock = 1 << 20

// hostCopy is bytes of host memory, from src, that belong at dst: a job's
// answers from the slot's staging into the caller's result.
type hostCopy struct {
	dst, src unsafe.Pointer
	bytes    int
}

// copyAll makes every copy on the crew through the caches, in blocks of
// copyBlock bytes, all the copies' blocks in one run: for the staging of
// observations, which a slot reuses job after job and the DMA can read
// from a large last-level cache (streaming stores measured no faster for
// the staged call on the H100 host).
func (c *hostCrew) copyAll(copies []hostCopy) {
	c.copyWith(copies, func(dst, src []byte) { copy(dst, src) })
}

// streamAll is copyAll with streaming stores (memcopy.Stream): for
// answers copied into the caller's result, which nothing reads soon and
// which, written through the caches, would be read from memory first.
func (c *hostCrew) streamAll(copies []hostCopy) {
	c.copyWith(copies, func(dst, src []byte) { memcopy.Stream(dst, src) })
}

// copyWith makes every copy on the crew with fn, in copyBlock pieces.
func (c *hostCrew) copyWith(copies []hostCopy, fn func(dst, src []byte)) {
	type piece struct {
		dst, src []byte
	}
	var pieces []piece
	for _, cp := range copies {
		dst, src := unsafe.Slice((*byte)(cp.dst), cp.bytes), unsafe.Slice((*byte)(cp.src), cp.bytes)
		for lo := 0; lo < cp.bytes; lo += copyBlock {
			hi := min(lo+copyBlock, cp.bytes)
			pieces = append(pieces, piece{dst[lo:hi], src[lo:hi]})
		}
	}
	_ = c.run(len(pieces), 1, func(lo, hi int) error {
		for _, p := range pieces[lo:hi] {
			fn(p.dst, p.src)
		}
		return nil
	})
}

// stage copies obs's latitude column, then its longitude column, in
// their precision into dst (room for 2 x obs.Len() values) on the crew,
// in copyBlock pieces.
func (c *hostCrew) stage(dst unsafe.Pointer, obs index.Points) {
	m, elem := obs.Len(), 8
	lat, lon := unsafe.Pointer(unsafe.SliceData(obs.Lat64)), unsafe.Pointer(unsafe.SliceData(obs.Lon64))
	if obs.Is32() {
		elem = 4
		lat, lon = unsafe.Pointer(unsafe.SliceData(obs.Lat32)), unsafe.Pointer(unsafe.SliceData(obs.Lon32))
	}
	c.copyAll([]hostCopy{{dst: dst, src: lat, bytes: m * elem}, {dst: unsafe.Add(dst, m*elem), src: lon, bytes: m * elem}})
}

// stageBlock is the points one crew block checks.
const stageBlock = 1 << 16

// check checks obs's points as CheckValues does on the crew (first:
// obs's first point's place in the query); generated points need none.
func (c *hostCrew) check(obs index.Points, first int) error {
	if obs.Gen != nil {
		return nil
	}
	return c.run(obs.Len(), stageBlock, func(lo, hi int) error {
		if err := obs.Slice(lo, hi).CheckValues("observations", first+lo); err != nil {
			return engine.BadInput{Err: err}
		}
		return nil
	})
}
