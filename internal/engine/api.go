package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/trace"
)

// Algorithm selects how the nearest reference is found.
type Algorithm int

const (
	// Grid searches a cell index over the references, rebuilt every query
	// (exact: the same answers as Brute). It is the default. Where a sample
	// of the query says no grid suits the references (crowded into a few
	// places, observations far from them) it walks a k-d tree instead (a
	// GPU session, which rebuilds its index on the device every query, runs
	// brute force there), and it runs as Brute where brute force is cheaper
	// (very few references).
	Grid Algorithm = iota
	// Brute compares every observation with every reference (exact).
	Brute
	// Seed is the float32 baseline brute-force kernel (seed.cu), kept as a
	// benchmark baseline: float32 haversine with fast trigonometry, not
	// exact (GPU only).
	Seed
)

func (a Algorithm) String() string {
	switch a {
	case Brute:
		return "brute"
	case Seed:
		return "seed"
	case Grid:
		return "grid"
	}
	return fmt.Sprintf("Algorithm(%d)", int(a))
}

// ParseAlgorithm parses "grid", "brute" or "seed".
func ParseAlgorithm(s string) (Algorithm, error) {
	switch strings.ToLower(s) {
	case "brute":
		return Brute, nil
	case "seed":
		return Seed, nil
	case "grid":
		return Grid, nil
	}
	return 0, fmt.Errorf("unknown algorithm %q (want grid, brute or seed)", s)
}

// Request is one nearest-reference query.
type Request struct {
	Obs, Ref  index.Points
	Algorithm Algorithm
	// BatchSize is the number of observations per job; 0 picks one from the
	// memory available and the number of workers.
	BatchSize int
	// GridSide fixes the grid algorithm's cells per axis; 0 lets a sampled
	// cost model choose (and fall back to brute force when that is cheaper).
	GridSide int
	// Progress, if set, is called after each finished job with the number of
	// observations done so far; calls may come from several goroutines but
	// never at once.
	Progress func(done, total int)
	// Trace, if set, receives the query's host stages and, on GPUs, each
	// job's copies and kernels on the host's clock.
	Trace *trace.Recorder
	// Prepared, if set, is Ref prepared once (CPUIndex.Prepared): the
	// engines skip preparing it, and a GPU that holds it from an earlier
	// query does not send it again.
	Prepared *Prepared
}

// Prepared is a reference set prepared for many queries: unit vectors with
// exact duplicates merged (nearest) and kept (k nearest, radius), and the
// CPU's indexes over them (nil: built by each query that needs one). It is
// read-only but for Plans, which locks.
type Prepared struct {
	Merged, All   *index.RefSet
	Tree, TreeAll *index.KDTree    // k-d trees of merged and all
	GridAll       *index.GridIndex // the fitted grid of all at the planned side
	Plans         *index.Plans     // the plans of queries on merged (safe for concurrent use)
}

// Plans is where the request's plans are remembered: the prepared
// references' (nil, which plans every query, without).
func (r Request) Plans() *index.Plans {
	if r.Prepared != nil {
		return r.Prepared.Plans
	}
	return nil
}

// Merged is the request's references with duplicates merged.
func (r Request) Merged() *index.RefSet {
	if r.Prepared != nil {
		return r.Prepared.Merged
	}
	return index.PrepareRefs(r.Ref)
}

// MergedTree is the prepared k-d tree of merged(), or nil.
func (r Request) MergedTree() *index.KDTree {
	if r.Prepared != nil {
		return r.Prepared.Tree
	}
	return nil
}

// AllTree is the k-d tree of all (refs): the prepared one, or built.
func (r Request) AllTree(refs *index.RefSet) *index.KDTree {
	if r.Prepared != nil && r.Prepared.TreeAll != nil {
		return r.Prepared.TreeAll
	}
	return index.BuildKDTree(refs)
}

// AllGrid is the fitted grid of side g over all (refs): the prepared one
// when it has that side, or built.
func (r Request) AllGrid(refs *index.RefSet, g int) *index.GridIndex {
	if r.Prepared != nil && r.Prepared.GridAll != nil && r.Prepared.GridAll.G == g {
		return r.Prepared.GridAll
	}
	return index.BuildFittedGrid(refs, g)
}

// All is the request's references with duplicates kept.
func (r Request) All() *index.RefSet {
	if r.Prepared != nil {
		return r.Prepared.All
	}
	return index.PrepareRefsAll(r.Ref)
}

// Result receives the answers: one entry per observation, in input order.
type Result struct {
	Index    []uint32  // index into Ref of the nearest reference
	Distance []float32 // great-circle angle to it, radians
}

// Stats describes how a query ran. Its fields are the public
// geoknn.Stats's, which documents each once; the root package converts
// one into the other (statsOf), which stops compiling if they drift apart.
type Stats struct {
	Engine                          string
	Devices                         []string
	Jobs                            int
	Wall                            time.Duration
	Kernel, Index, Upload, Download time.Duration
	Refined                         int
	Note                            string
}

// Engine answers nearest-reference queries. Implementations keep device
// state (contexts, modules, buffers) between calls; Close releases it.
type Engine interface {
	Nearest(ctx context.Context, req Request, out Result) (Stats, error)
	// NewSession keeps obs (copied) resident for repeated queries.
	NewSession(obs index.Points, opts SessionOptions) (Session, error)
	// KNearest answers the out.K nearest references of every observation
	// within maxRad radians; Within the references within rad.
	KNearest(ctx context.Context, req Request, maxRad float64, out KResult) (Stats, error)
	Within(ctx context.Context, req Request, rad float64, list bool) (WithinResult, Stats, error)
	Close() error
}

// BadInput is an error in the caller's points found while a query runs: it
// is reported as it is, without the GPU and job it was found on.
type BadInput struct{ Err error }

func (b BadInput) Error() string { return b.Err.Error() }

func (b BadInput) Unwrap() error { return b.Err }

// CheckRequest checks a request before it runs: everything but the
// observations' values unless values is set (the GPU engine checks each
// job's as it sends them, beside the GPUs' work).
func CheckRequest(req Request, out Result, values bool) error {
	if err := CheckPoints(req, values); err != nil {
		return err
	}
	if len(out.Index) != req.Obs.Len() || len(out.Distance) != req.Obs.Len() {
		return fmt.Errorf("result has room for %d indices and %d distances, want %d", len(out.Index), len(out.Distance), req.Obs.Len())
	}
	return nil
}

// CheckPoints checks a request's points, sizes and batch.
func CheckPoints(req Request, values bool) error {
	if err := req.Obs.CheckShape("observations"); err != nil {
		return err
	}
	if values {
		if err := req.Obs.CheckValues("observations", 0); err != nil {
			return err
		}
	}
	if err := req.Ref.Check("references"); err != nil {
		return err
	}
	if req.Ref.Len() == 0 {
		return fmt.Errorf("references: the set is empty")
	}
	if req.Ref.Len() > 1<<31-1 || req.Obs.Len() > 1<<40 {
		return fmt.Errorf("too many points: %d observations, %d references", req.Obs.Len(), req.Ref.Len())
	}
	if req.BatchSize < 0 || req.BatchSize > 1<<31-1 {
		return fmt.Errorf("batch size %d is not in [0, 2^31-1]", req.BatchSize)
	}
	return checkGridSide(req.GridSide)
}

// checkGridSide refuses a grid of more cells than the index holds (the
// kernels' cell numbers and z-runs are sized for it).
func checkGridSide(side int) error {
	if side < 0 || side > index.MaxGridSide {
		return fmt.Errorf("grid side %d is not in [0, %d] (0: chosen from the points)", side, index.MaxGridSide)
	}
	return nil
}

// NoNeighbour marks the entries of a k-nearest row past the references
// found within the query's distance limit.
const NoNeighbour = ^uint32(0)

// KResult receives k answers an observation, row-major: observation i's are
// entries [i*K, (i+1)*K), nearest first, ties to the lower index; where
// fewer than K references lie within the distance limit the row ends in
// NoNeighbour indices and +Inf distances (radians).
type KResult struct {
	K        int
	Index    []uint32
	Distance []float32
}

// CheckKRefs is the rule for k: from 1 to the number of references nref,
// more refused with both named (the root package's CheckK says the same).
func CheckKRefs(k, nref int) error {
	switch {
	case k < 1:
		return fmt.Errorf("k = %d: want at least 1", k)
	case k > nref:
		return fmt.Errorf("k = %d is more than the %d references", k, nref)
	}
	return nil
}

// CheckK checks a k-nearest request: its points, k, the result's room for
// k answers an observation, and the maximum distance.
func CheckK(req Request, maxRad float64, out KResult) error {
	if err := CheckPoints(req, true); err != nil {
		return err
	}
	n := req.Obs.Len()
	if err := CheckKRefs(out.K, req.Ref.Len()); err != nil {
		return err
	}
	if len(out.Index) != n*out.K || len(out.Distance) != n*out.K {
		return fmt.Errorf("result has room for %d indices and %d distances, want %d", len(out.Index), len(out.Distance), n*out.K)
	}
	if !(maxRad > 0) {
		return fmt.Errorf("maximum distance %v rad: want a positive distance", maxRad)
	}
	return nil
}

// WithinResult is the answer of a radius query: Counts[i] references lie
// within the radius of observation i; with lists, they are
// Index[Offsets[i]:Offsets[i+1]] with their Distance (radians), nearest
// first, ties to the lower index.
type WithinResult struct {
	Counts   []uint32
	Offsets  []uint64
	Index    []uint32
	Distance []float32
}

// Gather concatenates the batches' lists, in observation order.
func (r *WithinResult) Gather(batches [][]index.Neighbour) {
	r.Offsets = make([]uint64, len(r.Counts)+1)
	for i, c := range r.Counts {
		r.Offsets[i+1] = r.Offsets[i] + uint64(c)
	}
	total := r.Offsets[len(r.Counts)]
	r.Index, r.Distance = make([]uint32, 0, total), make([]float32, 0, total)
	for _, b := range batches {
		for _, nb := range b {
			r.Index = append(r.Index, nb.ID)
			r.Distance = append(r.Distance, float32(index.ChordToAngle(nb.D2)))
		}
	}
}
