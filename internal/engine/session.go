package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/kernels"
)

// Session keeps a fixed-size set of observations resident in an engine so
// that repeated queries against changing references (a simulation's steps)
// move only what changed: on a GPU the observations, their unit vectors,
// their order by grid cell and the previous answers stay in device memory,
// and a query sends only the references, builds the index on the device and
// brings back the answers only when asked. A Session is not safe for
// concurrent use, and queries on its engine wait for it. After an error from
// Replace, Nearest or Start its contents (which observations were replaced,
// the previous answers the changed count compares with) are unspecified:
// close it and open a new one.
type Session interface {
	// Len is the number of observations.
	Len() int
	// Replace makes observation idx[k] the point pts.At(k); idx must be
	// strictly increasing and below Len.
	Replace(ctx context.Context, idx []uint32, pts index.Points) error
	// Nearest answers every observation against ref. With out's slices
	// nil the answers stay in the engine and only the statistics and the
	// count of changed answers come back; otherwise they must have room
	// for Len answers.
	Nearest(ctx context.Context, ref index.Points, out Result) (SessionStats, error)
	// Start is Nearest in two halves: it returns once the query is under
	// way (on GPUs: the references prepared on the host, the device work
	// queued) so the caller can do host work meanwhile, and the Pending's
	// Wait finishes it. Wait must be called, and nothing else on the
	// session or its engine may run in between.
	Start(ctx context.Context, ref index.Points, out Result) (Pending, error)
	// SetMovers makes m (copied) the session's moving references, which
	// Advance moves and StartMovers queries against: on a GPU they stay
	// on the device, and no reference crosses PCIe between steps.
	SetMovers(ctx context.Context, m Movers) error
	// Advance makes one step of a simulation inside the session (see
	// Advance). It only queues the work on a GPU: the next query runs after
	// it.
	Advance(ctx context.Context, a Advance) error
	// StartMovers is Start against the session's movers.
	StartMovers(ctx context.Context, out Result) (Pending, error)
	// Positions copies the current observations (obsLat, obsLon: radians,
	// float64) and movers (refLat, refLon) out; nil pairs are skipped.
	Positions(ctx context.Context, obsLat, obsLon, refLat, refLon []float64) error
	// Close releases the session's memory.
	Close() error
}

// Pending is a session query under way (Session.Start).
type Pending interface {
	// Wait blocks until the query is done and returns what Nearest would
	// have; later calls return the same.
	Wait() (SessionStats, error)
}

// SessionOptions configures a session's queries.
type SessionOptions struct {
	Algorithm Algorithm
	// GridSide fixes the grid's cells per axis; 0 chooses from a sample.
	GridSide int
	// Replan is the number of queries a grid plan (cell size, or brute
	// force) is kept for before it is chosen again from a sample of the
	// observations and the current references; 0 means 16. Planning costs
	// tens of milliseconds of CPU, more than a resident GPU query.
	Replan int
}

// SessionStats describes one query of a session.
type SessionStats struct {
	Stats
	// Changed counts the observations not replaced since the previous
	// query whose answer (reference index) differs from that query's; 0
	// on the first query.
	Changed int
	// Replaced is the number of observations replaced since the previous
	// query.
	Replaced int
	// Prepare is the host time spent preparing the references (unit
	// vectors, merged duplicates) and, when due, the grid plan.
	Prepare time.Duration
}

// NoAnswer marks an observation with no previous answer (new since the
// last query).
const NoAnswer = kernels.NoAnswer

// CheckSession refuses, before an engine places them, observations that
// are not valid points or options no session takes: what every engine's
// NewSession checks first.
func CheckSession(obs index.Points, opts SessionOptions) error {
	if err := CheckSessionOptions(opts); err != nil {
		return err
	}
	return obs.Check("observations")
}

// CheckSessionOptions refuses options no session takes.
func CheckSessionOptions(opts SessionOptions) error {
	if opts.Algorithm == Seed {
		return fmt.Errorf("session: the seed algorithm is a benchmark baseline, not for sessions")
	}
	if err := checkGridSide(opts.GridSide); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	if opts.Replan < 0 {
		return fmt.Errorf("session: negative replan interval %d", opts.Replan)
	}
	return nil
}

// CheckReplace validates a replacement against n observations.
func CheckReplace(idx []uint32, pts index.Points, n int) error {
	if pts.Len() != len(idx) {
		return fmt.Errorf("replace: %d indices but %d points", len(idx), pts.Len())
	}
	for k, i := range idx {
		if int(i) >= n {
			return fmt.Errorf("replace: index %d (entry %d) out of range [0, %d)", i, k, n)
		}
		if k > 0 && i <= idx[k-1] {
			return fmt.Errorf("replace: indices must be strictly increasing: %d after %d (entry %d)", i, idx[k-1], k)
		}
	}
	return pts.Check("replacement points")
}

// ObsSample is the fixed random sample of a session's observations that its
// grid plans are drawn from, kept current through replacements.
type ObsSample struct {
	Idx []uint32     // sorted observation indices
	Pts index.Points // float64 columns, pts.At(k) is observation idx[k]
}

func NewObsSample(obs index.Points) *ObsSample {
	const size = 512
	n := obs.Len()
	var idx []uint32
	if n <= size {
		idx = make([]uint32, n)
		for i := range idx {
			idx[i] = uint32(i)
		}
	} else {
		rng := rand.New(rand.NewPCG(uint64(n), 0x5eed))
		seen := map[uint32]bool{}
		for len(idx) < size {
			if i := uint32(rng.IntN(n)); !seen[i] {
				seen[i] = true
				idx = append(idx, i)
			}
		}
		slices.Sort(idx)
	}
	s := &ObsSample{Idx: idx, Pts: index.Points{Lat64: make([]float64, len(idx)), Lon64: make([]float64, len(idx))}}
	for k, i := range idx {
		s.Pts.Lat64[k], s.Pts.Lon64[k] = obs.At(int(i))
	}
	return s
}

// Replace updates the sampled observations among idx (sorted).
func (s *ObsSample) Replace(idx []uint32, pts index.Points) {
	for k, i := range s.Idx {
		if j, ok := slices.BinarySearch(idx, i); ok {
			s.Pts.Lat64[k], s.Pts.Lon64[k] = pts.At(j)
		}
	}
}

// SessionPlan is a session's current grid plan and how many queries it has
// served.
type SessionPlan struct {
	Shape  index.GridShape // g == 0: brute force
	Note   string
	Uses   int
	nref   int
	Replan int
}

// Due reports whether the next query against nref references plans again.
func (p *SessionPlan) Due(nref int) bool {
	return !(p.Uses > 0 && p.Uses < p.Replan && p.nref == nref)
}

// Update re-plans when the plan is stale: first query, Replan queries on,
// or a different reference count.
func (p *SessionPlan) Update(opts SessionOptions, sample *ObsSample, refs *index.RefSet, cost index.GridCost) {
	if opts.Algorithm != Grid {
		p.Shape, p.Note = index.GridShape{}, ""
		return
	}
	if !p.Due(refs.N) {
		p.Uses++
		return
	}
	plan := index.PlanGrid(sample.Pts, refs, cost, opts.GridSide, nil)
	if plan.Index == nil {
		p.Shape, p.Note = index.GridShape{}, "grid fell back to brute force: "+plan.Reason
	} else {
		p.Shape, p.Note = index.NewGridShape(plan.Index.G), plan.Note()
	}
	p.Uses, p.nref = 1, refs.N
}
