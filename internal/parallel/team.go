package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Team is a set of goroutines kept awake across the parallel steps of one
// task (a query's check, preparation, index build and answers), so that
// each step starts on every worker at once. Blocks starts goroutines for
// every call, and the runtime wakes idle cores for them one after another
// (a futex each, and on a virtual machine an interrupt to a halted CPU), a
// loss of milliseconds paid at every step (BENCHMARKS.md). A team's
// workers spin between steps instead, yielding their core to any other
// goroutine, and sleep only after teamSpin without one.
//
// Steps are handed to the team from one goroutine at a time, which takes
// part as worker 0; a step's function must not hand the team a step of its
// own. A nil *Team runs its steps through Blocks.
type Team struct {
	workers int
	step    atomic.Pointer[teamStep]
	closed  atomic.Bool
	parked  atomic.Int32
	mu      sync.Mutex
	wake    *sync.Cond
	done    sync.WaitGroup
}

// teamSpin is how long a worker waits for the next step awake: longer than
// the serial stretches between a query's steps, short enough that an idle
// team soon leaves its cores to the rest of the program.
const teamSpin = 2 * time.Millisecond

// teamYieldEvery is how many polls of the next step a spinning worker makes
// between yields of its core.
const teamYieldEvery = 256

// teamStep is one call of Team.Blocks: its blocks, handed out through next,
// and how many workers are inside it.
type teamStep struct {
	n, block, blocks int
	fn               func(w, lo, hi int)
	next             atomic.Int64
	active           atomic.Int32
}

// NewTeam starts a team of workers goroutines (0: GOMAXPROCS), the caller
// of each step counted as one of them. Close stops them.
func NewTeam(workers int) *Team {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	t := &Team{workers: workers}
	t.wake = sync.NewCond(&t.mu)
	for w := 1; w < workers; w++ {
		t.done.Add(1)
		go t.work(w)
	}
	return t
}

// Workers is the team's size (GOMAXPROCS for a nil team): the range of the
// w that steps pass to their functions.
func (t *Team) Workers() int {
	if t == nil {
		return runtime.GOMAXPROCS(0)
	}
	return t.workers
}

// Close stops the team's workers once they finish the step at hand; a nil
// team has none.
func (t *Team) Close() {
	if t == nil {
		return
	}
	t.closed.Store(true)
	t.mu.Lock()
	t.wake.Broadcast()
	t.mu.Unlock()
	t.done.Wait()
}

// Blocks is the package's Blocks on the team's workers: fn(w, lo, hi) for
// every block [lo, hi) of size block of [0, n), w in [0, Workers()). It
// returns when every block is done.
func (t *Team) Blocks(n, block int, fn func(w, lo, hi int)) {
	if t == nil {
		Blocks(n, block, 0, fn)
		return
	}
	if n <= 0 {
		return
	}
	block = max(block, 1)
	blocks := (n + block - 1) / block
	if blocks == 1 || t.workers == 1 {
		Blocks(n, block, 1, fn)
		return
	}
	s := &teamStep{n: n, block: block, blocks: blocks, fn: fn}
	t.step.Store(s)
	if t.parked.Load() > 0 {
		t.mu.Lock()
		t.wake.Broadcast()
		t.mu.Unlock()
	}
	s.run(0)
	// A worker counted in active may still be inside a block; one that
	// joins later finds none left and never calls fn.
	for polls := 1; s.active.Load() > 0; polls++ {
		if polls%teamYieldEvery == 0 {
			runtime.Gosched()
		}
	}
}

// run does blocks of s as worker w until none is left.
func (s *teamStep) run(w int) {
	for {
		b := int(s.next.Add(1) - 1)
		if b >= s.blocks {
			return
		}
		s.fn(w, b*s.block, min((b+1)*s.block, s.n))
	}
}

// work is worker w's loop: each new step in turn, until Close.
func (t *Team) work(w int) {
	defer t.done.Done()
	var seen *teamStep
	for {
		s := t.await(seen)
		if s == nil {
			return
		}
		seen = s
		s.active.Add(1)
		s.run(w)
		s.active.Add(-1)
	}
}

// await is the first step other than seen, or nil once the team closes:
// polled for teamSpin, yielding the core every teamYieldEvery polls, then
// waited for asleep.
func (t *Team) await(seen *teamStep) *teamStep {
	deadline := time.Now().Add(teamSpin)
	for polls := 1; ; polls++ {
		if s := t.step.Load(); s != seen {
			return s
		}
		if t.closed.Load() {
			return nil
		}
		if polls%teamYieldEvery == 0 {
			if time.Now().After(deadline) {
				return t.sleep(seen)
			}
			runtime.Gosched()
		}
	}
}

// sleep waits for a step other than seen, or the team's close (nil).
// parked is raised before the step is looked at again, so a step handed
// out meanwhile either is seen here or finds parked raised and wakes it.
func (t *Team) sleep(seen *teamStep) *teamStep {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.parked.Add(1)
	defer t.parked.Add(-1)
	for {
		if s := t.step.Load(); s != seen {
			return s
		}
		if t.closed.Load() {
			return nil
		}
		t.wake.Wait()
	}
}
