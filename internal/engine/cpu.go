package engine

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
)

// CPU is the exact brute-force engine on all cores: goroutines pull batches
// of observations and scan every reference in float64. It is the reference
// implementation that the GPU engine must agree with.
type CPU struct {
	workers int
}

// NewCPU returns a CPU engine with the given number of goroutines; 0 means
// runtime.GOMAXPROCS(0).
func NewCPU(workers int) *CPU {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return &CPU{workers: workers}
}

// Close releases nothing: the CPU engine holds no resources between calls.
func (c *CPU) Close() error { return nil }

const (
	cpuBatch   = 1024 // observations per job unless the request says otherwise
	cpuRefTile = 1024 // references per tile: 24 KiB of float64 unit vectors, L1 resident
)

// Nearest answers req into out. The observations' values are checked
// while the references are prepared and indexed (a memory-bound pass
// beside compute-bound ones); nothing reads the observations before the
// check has passed.
func (c *CPU) Nearest(ctx context.Context, req Request, out Result) (Stats, error) {
	start := time.Now()
	end := req.Trace.Begin("host", "check points")
	if err := checkRequest(req, out, false); err != nil {
		return Stats{}, err
	}
	end()
	req.obsCheck = startObsCheck(req)
	end = req.Trace.Begin("host", "prepare references")
	refs := req.merged()
	end()
	switch req.Algorithm {
	case Brute:
		return c.nearestBrute(ctx, req, out, refs, start)
	case Grid:
		return c.nearestGrid(ctx, req, out, refs, start)
	}
	return Stats{}, fmt.Errorf("cpu engine: algorithm %v is GPU-only", req.Algorithm)
}

func (c *CPU) nearestBrute(ctx context.Context, req Request, out Result, refs *refSet, start time.Time) (Stats, error) {
	batch := req.BatchSize
	if batch == 0 {
		batch = cpuBatch
	}
	return c.run(ctx, req, batch, start, func() func(lo, hi int) {
		s := newCPUScratch(batch)
		return func(lo, hi int) {
			s.scan(req.Obs, lo, hi, refs)
			for i := lo; i < hi; i++ {
				out.Index[i] = refs.orig[s.idx[i-lo]]
				out.Distance[i] = float32(ChordToAngle(s.best[i-lo]))
			}
		}
	})
}

// run answers the request's observations in jobs of batch on the engine's
// goroutines; newWorker gives each goroutine its own job function (and
// scratch), which answers observations [lo, hi).
func (c *CPU) run(ctx context.Context, req Request, batch int, start time.Time, newWorker func() func(lo, hi int)) (Stats, error) {
	if err := req.obsCheck.wait(); err != nil {
		return Stats{}, err
	}
	n := req.Obs.Len()
	jobs := (n + batch - 1) / batch
	var next atomic.Int64
	var mu sync.Mutex
	done := 0
	g, gctx := errgroup.WithContext(ctx)
	for w := 0; w < c.workers; w++ {
		g.Go(func() error {
			job := newWorker()
			for {
				j := int(next.Add(1) - 1)
				if j >= jobs {
					return nil
				}
				if err := gctx.Err(); err != nil {
					return err
				}
				lo, hi := j*batch, min((j+1)*batch, n)
				t := time.Now()
				job(lo, hi)
				req.Trace.Add(fmt.Sprintf("CPU %d", w), "batch", t, time.Since(t))
				if req.Progress != nil {
					mu.Lock()
					done += hi - lo
					req.Progress(done, n)
					mu.Unlock()
				}
			}
		})
	}
	if err := g.Wait(); err != nil {
		return Stats{}, fmt.Errorf("cpu engine: %w", err)
	}
	return c.stats(jobs, start), nil
}

// stats is the account of a query of jobs that began at start.
func (c *CPU) stats(jobs int, start time.Time) Stats {
	return Stats{
		Engine:  "cpu",
		Devices: []string{fmt.Sprintf("%d goroutines on %d cores", c.workers, runtime.NumCPU())},
		Jobs:    jobs,
		Wall:    time.Since(start),
	}
}

// obsCheck is a check of the observations' values under way.
type obsCheck struct {
	done chan struct{}
	err  error
}

// startObsCheck checks req's observations on a goroutine of its own.
func startObsCheck(req Request) *obsCheck {
	c := &obsCheck{done: make(chan struct{})}
	go func() {
		defer close(c.done)
		end := req.Trace.Begin("host checks", "check observations")
		c.err = req.Obs.CheckValues("observations", 0)
		end()
	}()
	return c
}

// wait is the check's outcome once it is done; no check (nil) passes.
func (c *obsCheck) wait() error {
	if c == nil {
		return nil
	}
	<-c.done
	return c.err
}
