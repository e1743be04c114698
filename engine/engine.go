package engine

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Algorithm selects how the nearest reference is found.
type Algorithm int

const (
	// Grid searches a cell index over the references, rebuilt every query
	// (exact: the same answers as Brute). It is the default; it runs as
	// Brute when a sample of the query says brute force is cheaper
	// (references packed into few places, or very few references).
	Grid Algorithm = iota
	// Brute compares every observation with every reference (exact).
	Brute
	// Seed is the reference notebook's kernel, ported as a benchmark baseline:
	// float32 haversine with fast trigonometry, not exact (GPU only).
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
	Obs, Ref  Points
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
}

// Result receives the answers: one entry per observation, in input order.
type Result struct {
	Index    []uint32  // index into Ref of the nearest reference
	Distance []float32 // great-circle angle to it, radians
}

// Stats describes how a query ran.
type Stats struct {
	Engine  string        // "cpu" or "gpu"
	Devices []string      // what ran it: "16 cores", "NVIDIA H200 (#0)", ...
	Jobs    int           // jobs the observations were split into
	Wall    time.Duration // whole query, including preparation and copies
	// Device time by stage, measured with device events: summed over a
	// GPU's jobs, then the largest over GPUs; zero on the CPU. Kernel counts
	// every kernel (index build, sorts, queries, refine; the kernels of
	// successive jobs never overlap); Index is the part of it spent building
	// the grid index; Upload and Download are the observations' copies in
	// and the answers' copies out (summed over jobs; they overlap other
	// jobs' kernels, and a copy may queue behind the other slot's copy in
	// the same direction).
	Kernel, Index, Upload, Download time.Duration
	// Refined counts observations whose float32 ranking was too close to
	// call and were re-ranked in float64 (GPU only).
	Refined int
	// Note says how the algorithm ran (grid shape, or why it fell back).
	Note string
}

// Engine answers nearest-reference queries. Implementations keep device
// state (contexts, modules, buffers) between calls; Close releases it.
type Engine interface {
	Nearest(ctx context.Context, req Request, out Result) (Stats, error)
	Close() error
}

func checkRequest(req Request, out Result) error {
	if err := req.Obs.Check("observations"); err != nil {
		return err
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
	if len(out.Index) != req.Obs.Len() || len(out.Distance) != req.Obs.Len() {
		return fmt.Errorf("result has room for %d indices and %d distances, want %d", len(out.Index), len(out.Distance), req.Obs.Len())
	}
	if req.BatchSize < 0 {
		return fmt.Errorf("batch size %d is negative", req.BatchSize)
	}
	return nil
}

// addDevice folds one GPU's stage times into st.
func (st *Stats) addDevice(t stageTimes) {
	st.Kernel = max(st.Kernel, t.kernel)
	st.Index = max(st.Index, t.index)
	st.Upload = max(st.Upload, t.upload)
	st.Download = max(st.Download, t.download)
	st.Refined += t.refined
}
