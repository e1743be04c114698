package engine

import (
	"context"
	"fmt"
	"math"
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

// Nearest answers req into out.
func (c *CPU) Nearest(ctx context.Context, req Request, out Result) (Stats, error) {
	start := time.Now()
	if err := checkRequest(req, out); err != nil {
		return Stats{}, err
	}
	refs := prepareRefs(req.Ref)
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
				job(lo, hi)
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
	return Stats{
		Engine:  "cpu",
		Devices: []string{fmt.Sprintf("%d goroutines on %d cores", c.workers, runtime.NumCPU())},
		Jobs:    jobs,
		Wall:    time.Since(start),
	}, nil
}

// cpuScratch is one goroutine's working set for a batch of observations.
type cpuScratch struct {
	x, y, z     []float64
	best, runup []float64 // largest and second-largest dot product
	idx         []int32
}

func newCPUScratch(batch int) *cpuScratch {
	return &cpuScratch{
		x: make([]float64, batch), y: make([]float64, batch), z: make([]float64, batch),
		best: make([]float64, batch), runup: make([]float64, batch), idx: make([]int32, batch),
	}
}

// dotMargin bounds, in dot-product units, how far the float64 dot product can
// rank two references differently from the squared chord computed as a sum
// of squared differences (chord2): the unit vectors' norms differ from 1 by
// up to 2^-52 and each dot product carries up to 3 roundings near 1. A
// winner whose lead is not larger is re-ranked with chord2.
const dotMargin = 4e-15

// scan finds the nearest distinct reference of observations [lo, hi) and
// leaves its squared chord in s.best and its distinct-reference index in
// s.idx. The hot loop ranks by dot product (5 flops a pair instead of 8);
// observations whose winner leads the runner-up by less than dotMargin are
// re-ranked by chord2, so the answer is exactly chord2's, ties to the lowest
// index, as on the GPU.
func (s *cpuScratch) scan(obs Points, lo, hi int, refs *refSet) {
	m := hi - lo
	for i := 0; i < m; i++ {
		s.x[i], s.y[i], s.z[i] = unit(obs.At(lo + i))
		s.best[i], s.runup[i] = math.Inf(-1), math.Inf(-1)
		s.idx[i] = 0
	}
	for t0 := 0; t0 < refs.n; t0 += cpuRefTile {
		t1 := min(t0+cpuRefTile, refs.n)
		rx, ry, rz := refs.x[t0:t1], refs.y[t0:t1], refs.z[t0:t1]
		i := 0
		for ; i+3 <= m; i += 3 {
			scan3(s.x[i:i+3], s.y[i:i+3], s.z[i:i+3], s.best[i:i+3], s.runup[i:i+3], s.idx[i:i+3], rx, ry, rz, int32(t0))
		}
		for ; i < m; i++ {
			scan1(s.x[i], s.y[i], s.z[i], &s.best[i], &s.runup[i], &s.idx[i], rx, ry, rz, int32(t0))
		}
	}
	for i := 0; i < m; i++ {
		if s.best[i]-s.runup[i] <= dotMargin {
			s.best[i], s.idx[i] = exactNearest(s.x[i], s.y[i], s.z[i], refs)
			continue
		}
		k := s.idx[i]
		s.best[i] = chord2(s.x[i], s.y[i], s.z[i], refs.x[k], refs.y[k], refs.z[k])
	}
}

// exactNearest ranks every reference by chord2; strict < keeps the lowest
// index on ties.
func exactNearest(ox, oy, oz float64, refs *refSet) (float64, int32) {
	best, bi := math.Inf(1), int32(0)
	for j := range refs.x {
		if d := chord2(ox, oy, oz, refs.x[j], refs.y[j], refs.z[j]); d < best {
			best, bi = d, int32(j)
		}
	}
	return best, bi
}

// scan3Generic updates three observations against a tile of references, keeping
// the largest and second-largest dot product. Three independent chains keep
// the floating-point units busy while everything stays in amd64's 16 vector
// registers (four spill and run 25% slower); the rarely taken branch costs
// one compare a pair.
func scan3Generic(ox, oy, oz, best, runup []float64, idx []int32, rx, ry, rz []float64, base int32) {
	_, _, _, _, _, _ = ox[2], oy[2], oz[2], best[2], runup[2], idx[2]
	x0, x1, x2 := ox[0], ox[1], ox[2]
	y0, y1, y2 := oy[0], oy[1], oy[2]
	z0, z1, z2 := oz[0], oz[1], oz[2]
	b0, b1, b2 := best[0], best[1], best[2]
	s0, s1, s2 := runup[0], runup[1], runup[2]
	i0, i1, i2 := idx[0], idx[1], idx[2]
	ry, rz = ry[:len(rx)], rz[:len(rx)]
	for j, x := range rx {
		y, z := ry[j], rz[j]
		if d := x0*x + y0*y + z0*z; d > s0 {
			if d > b0 {
				s0, b0, i0 = b0, d, base+int32(j)
			} else {
				s0 = d
			}
		}
		if d := x1*x + y1*y + z1*z; d > s1 {
			if d > b1 {
				s1, b1, i1 = b1, d, base+int32(j)
			} else {
				s1 = d
			}
		}
		if d := x2*x + y2*y + z2*z; d > s2 {
			if d > b2 {
				s2, b2, i2 = b2, d, base+int32(j)
			} else {
				s2 = d
			}
		}
	}
	best[0], best[1], best[2] = b0, b1, b2
	runup[0], runup[1], runup[2] = s0, s1, s2
	idx[0], idx[1], idx[2] = i0, i1, i2
}

func scan1(ox, oy, oz float64, best, runup *float64, idx *int32, rx, ry, rz []float64, base int32) {
	b, s, bi := *best, *runup, *idx
	ry, rz = ry[:len(rx)], rz[:len(rx)]
	for j, x := range rx {
		if d := ox*x + oy*ry[j] + oz*rz[j]; d > s {
			if d > b {
				s, b, bi = b, d, base+int32(j)
			} else {
				s = d
			}
		}
	}
	*best, *runup, *idx = b, s, bi
}
