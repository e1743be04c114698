package cpu

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/index"
)

// NewSession keeps obs (copied) for repeated queries on the CPU engine.
// The CPU has no device memory to save; the session keeps the previous
// answers to count changes, and re-plans the grid every query (the plan is
// cheap next to a CPU query).
func (c *CPU) NewSession(obs index.Points, opts engine.SessionOptions) (engine.Session, error) {
	if err := engine.CheckSession(obs, opts); err != nil {
		return nil, err
	}
	n := obs.Len()
	s := &cpuSession{c: c, opts: opts, prev: make([]uint32, n),
		res: engine.Result{Index: make([]uint32, n), Distance: make([]float32, n)}}
	if obs.Is32() {
		s.obs = index.Radians32(slices.Clone(obs.Lat32), slices.Clone(obs.Lon32))
	} else {
		s.obs = index.Points{Lat64: make([]float64, n), Lon64: make([]float64, n)}
		for i := range n {
			s.obs.Lat64[i], s.obs.Lon64[i] = obs.At(i)
		}
	}
	for i := range s.prev {
		s.prev[i] = engine.NoAnswer
	}
	return s, nil
}

type cpuSession struct {
	c        *CPU
	opts     engine.SessionOptions
	obs      index.Points
	prev     []uint32
	res      engine.Result
	replaced int
	mv       engine.Movers // the moving references (SetMovers)
	mvTop    float64       // their top speed
}

func (s *cpuSession) Len() int { return s.obs.Len() }

func (s *cpuSession) Close() error { return nil }

func (s *cpuSession) Replace(ctx context.Context, idx []uint32, pts index.Points) error {
	if err := engine.CheckReplace(idx, pts, s.obs.Len()); err != nil {
		return err
	}
	for k, i := range idx {
		lat, lon := pts.At(k)
		if s.obs.Is32() {
			s.obs.Lat32[i], s.obs.Lon32[i] = float32(lat), float32(lon)
		} else {
			s.obs.Lat64[i], s.obs.Lon64[i] = lat, lon
		}
		s.prev[i] = engine.NoAnswer
	}
	s.replaced += len(idx)
	return nil
}

// Start runs the query in a goroutine of its own.
func (s *cpuSession) Start(ctx context.Context, ref index.Points, out engine.Result) (engine.Pending, error) {
	n := s.obs.Len()
	if out.Index != nil && (len(out.Index) != n || len(out.Distance) != n) {
		return nil, fmt.Errorf("session: result has room for %d answers, want %d", len(out.Index), n)
	}
	q := &cpuPending{done: make(chan struct{})}
	go func() {
		defer close(q.done)
		q.stats, q.err = s.Nearest(ctx, ref, out)
	}()
	return q, nil
}

type cpuPending struct {
	done  chan struct{}
	stats engine.SessionStats
	err   error
}

func (q *cpuPending) Wait() (engine.SessionStats, error) {
	<-q.done
	return q.stats, q.err
}

func (s *cpuSession) Nearest(ctx context.Context, ref index.Points, out engine.Result) (engine.SessionStats, error) {
	n := s.obs.Len()
	if out.Index != nil && (len(out.Index) != n || len(out.Distance) != n) {
		return engine.SessionStats{}, fmt.Errorf("session: result has room for %d answers, want %d", len(out.Index), n)
	}
	st, err := s.c.Nearest(ctx, engine.Request{Obs: s.obs, Ref: ref, Algorithm: s.opts.Algorithm, GridSide: s.opts.GridSide}, s.res)
	if err != nil {
		return engine.SessionStats{}, err
	}
	t := time.Now()
	var changed atomic.Int64
	index.ParallelFor(n, func(lo, hi int) {
		c := 0
		for i := lo; i < hi; i++ {
			if p := s.prev[i]; p != engine.NoAnswer && p != s.res.Index[i] {
				c++
			}
			s.prev[i] = s.res.Index[i]
		}
		changed.Add(int64(c))
	})
	if out.Index != nil {
		index.ParallelCopy(out.Index, s.res.Index)
		index.ParallelCopy(out.Distance, s.res.Distance)
	}
	st.Wall += time.Since(t)
	ss := engine.SessionStats{Stats: st, Changed: int(changed.Load()), Replaced: s.replaced}
	s.replaced = 0
	return ss, nil
}
