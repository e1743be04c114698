package cpu

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/parallel"
)

// CPU is the exact engine on all cores: a team of workers pulls batches of
// observations and answers them in float64, through face cells, a grid, a
// k-d tree or every reference. It is the reference
// implementation that the GPU engine must agree with.
type CPU struct {
	workers int
	mu      sync.Mutex
	spare   *cpuMemory // the last query's memory, for the next one
	kept    keptFaces  // an Index's face cells, built once
	closed  bool       // Close ran: nothing more is kept
}

// cpuMemory is the memory of a query's prepared references, face cells and
// k-d tree (about 13 MB for 2^16 references; a tree, where the face cells
// need one, 11 MB more for 135,233 cities), which the engine keeps for its
// next query: fresh memory costs a page fault every 4 KiB as it is first
// written, and the system takes them one at a time.
type cpuMemory struct {
	refs  index.RefSet
	faces faceMemory
	tree  index.KDMemory
}

// takeMemory is the engine's spare memory, or new memory while another
// query holds it.
func (c *CPU) takeMemory() *cpuMemory {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.spare
	c.spare = nil
	if m == nil {
		m = &cpuMemory{}
	}
	return m
}

// keepMemory keeps m for the next query.
func (c *CPU) keepMemory(m *cpuMemory) {
	c.mu.Lock()
	c.spare = m
	c.mu.Unlock()
}

// NewCPU returns a CPU engine with the given number of goroutines; 0 means
// runtime.GOMAXPROCS(0).
func NewCPU(workers int) *CPU {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return &CPU{workers: workers}
}

// Close lets go of the memory the engine kept from its last query.
func (c *CPU) Close() error {
	c.keepMemory(nil)
	c.mu.Lock()
	c.kept, c.closed = keptFaces{}, true
	c.mu.Unlock()
	return nil
}

const (
	cpuBatch   = 1024 // observations per job unless the request says otherwise
	cpuRefTile = 1024 // references per tile: 24 KiB of float64 unit vectors, L1 resident
)

// Nearest answers req into out. A team of workers checks the
// observations' values, prepares the references, builds the face cells and
// answers, step after step, awake throughout; nothing reads the
// observations before the check has passed.
func (c *CPU) Nearest(ctx context.Context, r engine.Request, out engine.Result) (engine.Stats, error) {
	start, req := time.Now(), request{Request: r}
	end := req.Trace.Begin("host", "check points")
	if err := engine.CheckRequest(r, out, false); err != nil {
		return engine.Stats{}, err
	}
	end()
	req.team = parallel.NewTeam(c.workers)
	defer req.team.Close()
	end = req.Trace.Begin("host", "check observations")
	if err := req.Obs.CheckValuesOn("observations", 0, req.team); err != nil {
		return engine.Stats{}, err
	}
	end()
	mem := c.takeMemory()
	defer c.keepMemory(mem)
	req.faces, req.trees = &mem.faces, &mem.tree
	end = req.Trace.Begin("host", "prepare references")
	refs := req.mergedCPU(&mem.refs)
	end()
	// Each phase before the query checks ctx: a signal during a long
	// preparation stops the run at the next phase.
	if err := ctx.Err(); err != nil {
		return engine.Stats{}, err
	}
	switch req.Algorithm {
	case engine.Brute:
		return c.nearestBrute(ctx, req, out, refs, start)
	case engine.Grid:
		return c.nearestGrid(ctx, req, out, refs, start)
	}
	return engine.Stats{}, fmt.Errorf("cpu engine: algorithm %v is GPU-only", req.Algorithm)
}

func (c *CPU) nearestBrute(ctx context.Context, req request, out engine.Result, refs *index.RefSet, start time.Time) (engine.Stats, error) {
	batch := req.BatchSize
	if batch == 0 {
		batch = cpuBatch
	}
	return c.run(ctx, req, batch, start, func() func(lo, hi int) {
		s := newCPUScratch(batch)
		return func(lo, hi int) {
			s.scan(req.Obs, lo, hi, refs)
			for i := lo; i < hi; i++ {
				out.Index[i] = refs.Orig[s.idx[i-lo]]
				out.Distance[i] = float32(index.ChordToAngle(s.best[i-lo]))
			}
		}
	})
}

// run answers the request's observations in jobs of batch on the
// request's team, or a team of the engine's own; newWorker gives each
// worker its own job function (and scratch), which answers observations
// [lo, hi).
func (c *CPU) run(ctx context.Context, req request, batch int, start time.Time, newWorker func() func(lo, hi int)) (engine.Stats, error) {
	team := req.team
	if team == nil {
		team = parallel.NewTeam(c.workers)
		defer team.Close()
	}
	n := req.Obs.Len()
	jobs := (n + batch - 1) / batch
	workers := make([]func(lo, hi int), team.Workers())
	var mu sync.Mutex
	done := 0
	team.Blocks(jobs, 1, func(w, j, _ int) {
		if ctx.Err() != nil {
			return
		}
		if workers[w] == nil {
			workers[w] = newWorker()
		}
		lo, hi := j*batch, min((j+1)*batch, n)
		t := time.Now()
		workers[w](lo, hi)
		req.Trace.Add(fmt.Sprintf("CPU %d", w), "batch", t, time.Since(t))
		if req.Progress != nil {
			mu.Lock()
			done += hi - lo
			req.Progress(done, n)
			mu.Unlock()
		}
	})
	if err := ctx.Err(); err != nil {
		return engine.Stats{}, fmt.Errorf("cpu engine: %w", err)
	}
	return c.stats(jobs, start), nil
}

// stats is the account of a query of jobs that began at start.
func (c *CPU) stats(jobs int, start time.Time) engine.Stats {
	return engine.Stats{
		Engine:  "cpu",
		Devices: []string{fmt.Sprintf("%d goroutines on %d cores", c.workers, runtime.NumCPU())},
		Jobs:    jobs,
		Wall:    time.Since(start),
	}
}

// request is a query as the CPU engine runs it: the caller's request, and
// the team and memory of the engine's own that its steps share.
type request struct {
	engine.Request
	// team, when set, runs the request's parallel steps; faces and trees,
	// when set, are memory for its face cells and k-d tree (CPU.Nearest).
	team  *parallel.Team
	faces *faceMemory
	trees *index.KDMemory
}

// mergedCPU is merged as the CPU engine reads it, prepared into s on the
// request's team unless prepared already.
func (r request) mergedCPU(s *index.RefSet) *index.RefSet {
	if r.Prepared != nil {
		return r.Prepared.Merged
	}
	s.PrepareCPU(r.Ref, r.team)
	return s
}
