package geoknn

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/geoknn/geoknn/internal/cpu"
	"github.com/geoknn/geoknn/internal/engine"
)

// smallQuery is the largest query an Index answers on the calling
// goroutine with its prepared grids: below it, fanning out to the engine's
// workers (and planning a grid) costs more than the query.
const smallQuery = 256

// Index is a reference set prepared once and queried many times, as a
// fitted BallTree is: its unit vectors, merged duplicates and grids are
// built by NewIndex, so that a small query costs microseconds; larger
// queries go to the engine of its Searcher (the GPUs when there are),
// which keeps the prepared references (on GPUs, on the device) between
// queries.
// An Index is safe for concurrent queries; Close releases it.
type Index struct {
	ref Points
	cpu *cpu.CPUIndex
	mu  sync.Mutex // the Searcher, for large queries, one at a time
	s   *Searcher
}

// NewIndex prepares ref (radian columns, read in place: keep them
// unchanged while the Index is in use) on the engine opts asks for.
func NewIndex(ref Points, opts Options) (*Index, error) {
	cpu, err := cpu.NewCPUIndex(ref.cols)
	if err != nil {
		return nil, fmt.Errorf("geoknn: %w", err)
	}
	s, err := NewSearcher(opts)
	if err != nil {
		return nil, err
	}
	// Large queries reuse the prepared references; on GPUs they stay on
	// the device from one query to the next.
	s.prepared = cpu.Prepared()
	return &Index{ref: ref, cpu: cpu, s: s}, nil
}

// Len is the number of references.
func (x *Index) Len() int { return x.ref.Len() }

// Nearest answers, for every observation, the nearest reference.
func (x *Index) Nearest(ctx context.Context, obs Points) (*Result, error) {
	if obs.Len() > smallQuery {
		x.mu.Lock()
		defer x.mu.Unlock()
		return x.s.NearestRadians(ctx, obs, x.ref)
	}
	n := obs.Len()
	res := &Result{Index: make([]uint32, n), Distance: make([]float32, n), Stats: Stats{Engine: "cpu", Devices: []string{"calling goroutine"}}}
	if err := x.cpu.Nearest(obs.cols, engine.Result{Index: res.Index, Distance: res.Distance}); err != nil {
		return nil, fmt.Errorf("geoknn: %w", err)
	}
	return res, nil
}

// KNearest answers the k nearest references of every observation, as
// Searcher.KNearest does.
func (x *Index) KNearest(ctx context.Context, obs Points, k int, maxMetres float64) (*KResult, error) {
	if obs.Len() > smallQuery {
		x.mu.Lock()
		defer x.mu.Unlock()
		return x.s.KNearest(ctx, obs, x.ref, k, maxMetres)
	}
	maxRad, err := maxDistanceRad(maxMetres)
	if err != nil {
		return nil, err
	}
	n := obs.Len()
	out := engine.KResult{K: k, Index: make([]uint32, n*max(k, 0)), Distance: make([]float32, n*max(k, 0))}
	if err := x.cpu.KNearest(obs.cols, maxRad, out); err != nil {
		return nil, fmt.Errorf("geoknn: %w", err)
	}
	return &KResult{K: k, Index: out.Index, DistanceRad: out.Distance, Stats: Stats{Engine: "cpu"}}, nil
}

// Within answers the references within metres of every observation, as
// Searcher.Within does.
func (x *Index) Within(ctx context.Context, obs Points, metres float64, list bool) (*WithinResult, error) {
	if obs.Len() > smallQuery {
		x.mu.Lock()
		defer x.mu.Unlock()
		return x.s.Within(ctx, obs, x.ref, metres, list)
	}
	if !(metres >= 0) || math.IsInf(metres, 1) {
		return nil, fmt.Errorf("geoknn: radius %v m: want a finite distance, 0 or more", metres)
	}
	res, err := x.cpu.Within(obs.cols, metres/EarthRadiusMetres, list)
	if err != nil {
		return nil, fmt.Errorf("geoknn: %w", err)
	}
	return &WithinResult{Counts: res.Counts, Offsets: res.Offsets, Index: res.Index, DistanceRad: res.Distance,
		Stats: Stats{Engine: "cpu"}}, nil
}

// Close releases the Index's engine.
func (x *Index) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.s.Close()
}
