package validate

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync/atomic"

	"github.com/paulmach/orb"

	"github.com/geoknn/geoknn/sphere"
)

// MaxFailures is how many failures a Report keeps.
const MaxFailures = 10

// Report is the outcome of checking an engine's answer.
type Report struct {
	Checked int // observations checked
	// IndexWrong counts observations whose returned reference is more than
	// Tolerance farther than the true nearest, or out of range.
	IndexWrong int
	// DistanceWrong counts observations whose reported distance differs by
	// more than Tolerance from the float64 haversine distance to the
	// returned reference.
	DistanceWrong int
	// Ties counts observations whose returned index is not the lowest-index
	// true nearest but is within Tolerance of it: right answers.
	Ties int
	// MaxExcess is the largest dist(returned) - dist(true nearest), metres.
	MaxExcess float64
	// MaxDistanceError is the largest |reported - dist(returned)|, metres;
	// +Inf if a reported distance is NaN or infinite.
	MaxDistanceError float64
	// Failures holds the first MaxFailures wrong observations, by index.
	Failures []Failure
}

// Failure describes one wrong observation.
type Failure struct {
	Obs      int // observation index
	Returned int // reference index the engine returned
	Nearest  int // lowest-index true nearest reference
	// ReturnedMetres is the distance to Returned (NaN when out of range),
	// NearestMetres the distance to Nearest and ReportedMetres the distance
	// the engine reported.
	ReturnedMetres, NearestMetres, ReportedMetres float64
}

// OK reports whether no observation was wrong.
func (r Report) OK() bool { return r.IndexWrong == 0 && r.DistanceWrong == 0 }

// String returns a one-line summary.
func (r Report) String() string {
	return fmt.Sprintf("%d checked: %d wrong index, %d wrong distance (max excess %.3f m, max distance error %.3f m), %d ties",
		r.Checked, r.IndexWrong, r.DistanceWrong, r.MaxExcess, r.MaxDistanceError, r.Ties)
}

// String describes the failure in one line.
func (f Failure) String() string {
	if math.IsNaN(f.ReturnedMetres) {
		return fmt.Sprintf("observation %d: returned index %d is out of range (nearest %d at %.3f m)",
			f.Obs, f.Returned, f.Nearest, f.NearestMetres)
	}
	return fmt.Sprintf("observation %d: returned %d at %.3f m (reported %.3f m), nearest %d at %.3f m",
		f.Obs, f.Returned, f.ReturnedMetres, f.ReportedMetres, f.Nearest, f.NearestMetres)
}

// Exact checks the answer for every observation against a brute force over
// all pairs. index and distRad are the engine's answer: per observation, the
// index into ref and the central angle in radians. Work is spread over
// runtime.GOMAXPROCS(0) goroutines; Exact returns ctx.Err() if ctx is done
// first. Mismatched lengths, an empty ref or non-finite coordinates are
// errors; a wrong or out-of-range index is a Failure.
func Exact(ctx context.Context, obs, ref []orb.Point, index []uint32, distRad []float32) (Report, error) {
	return check(ctx, obs, ref, index, distRad, nil, runtime.GOMAXPROCS(0))
}

// Sampled is Exact on n observations drawn at random without replacement,
// reproducibly for a given seed; it checks all of them when n >= len(obs).
func Sampled(ctx context.Context, obs, ref []orb.Point, index []uint32, distRad []float32, n int, seed int64) (Report, error) {
	if n <= 0 {
		return Report{}, fmt.Errorf("validate: sample size %d is not positive", n)
	}
	var sel []int
	if n < len(obs) {
		sel = sample(len(obs), n, seed)
	}
	return check(ctx, obs, ref, index, distRad, sel, runtime.GOMAXPROCS(0))
}

// SampleIndices draws min(n, total) distinct indices of [0, total) in
// increasing order, reproducibly for a seed (all of them when n >= total):
// the observations a command checks with Exact, the one sampler the
// command line and the benchmarks share.
func SampleIndices(total, n int, seed uint64) []int {
	if n >= total {
		all := make([]int, max(total, 0))
		for i := range all {
			all[i] = i
		}
		return all
	}
	return sample(total, max(n, 0), int64(seed))
}

// sample draws k distinct integers from [0, n) by Floyd's algorithm, which
// needs memory for k, not n, and returns them in increasing order.
func sample(n, k int, seed int64) []int {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5851f42d4c957f2d))
	seen := make(map[int]struct{}, k)
	out := make([]int, 0, k)
	for j := n - k; j < n; j++ {
		t := rng.IntN(j + 1)
		if _, ok := seen[t]; ok {
			t = j
		}
		seen[t] = struct{}{}
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// check compares the answer for the observations in sel (all if sel is
// nil, otherwise increasing indices) with the brute force.
func check(ctx context.Context, obs, ref []orb.Point, index []uint32, distRad []float32, sel []int, workers int) (Report, error) {
	if err := checkInputs(ctx, obs, index, distRad); err != nil {
		return Report{}, err
	}
	if len(obs) == 0 {
		return Report{}, nil
	}
	s, err := newSearcher(ref, workers)
	if err != nil {
		return Report{}, err
	}
	stop, release := stopFlag(ctx)
	defer release()
	r, ok := s.checkAll(stop, obs, index, distRad, sel)
	if !ok {
		return Report{}, ctx.Err()
	}
	return r, nil
}

// checkInputs reports a done ctx, an answer whose length does not match
// the observations, or a non-finite observation.
func checkInputs(ctx context.Context, obs []orb.Point, index []uint32, distRad []float32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(index) != len(obs) || len(distRad) != len(obs) {
		return fmt.Errorf("validate: answer has %d indices and %d distances for %d observations",
			len(index), len(distRad), len(obs))
	}
	return checkFinite("observation", obs)
}

// checkAll checks the observations in sel (all if sel is nil) a batch at a
// time, which bounds scratch memory. It returns false if stop was set.
func (s *searcher) checkAll(stop *atomic.Bool, obs []orb.Point, index []uint32, distRad []float32, sel []int) (Report, bool) {
	total := len(obs)
	if sel != nil {
		total = len(sel)
	}
	scratch := newBatch(min(batchSize, total))
	var r Report
	for lo := 0; lo < total; lo += batchSize {
		b := scratch.load(obs, sel, lo, min(batchSize, total-lo))
		if !s.nearest(stop, b.pts, b.near, b.h) {
			return Report{}, false
		}
		for k, i := range b.obs {
			r.add(i, obs[i], s.ref, int(index[i]), distRad[i], b.near[k], b.h[k])
		}
	}
	return r, true
}

// batch holds a batch of observations being checked and the brute force's
// answer for them.
type batch struct {
	obs  []int       // observation indices
	pts  []orb.Point // the observations
	near []int       // nearest reference
	h    []float64   // haversine to it
}

func newBatch(n int) batch {
	return batch{make([]int, n), make([]orb.Point, n), make([]int, n), make([]float64, n)}
}

// load returns b cut to the m observations selected from position lo of
// sel (of obs if sel is nil) on, and fills it with them.
func (b batch) load(obs []orb.Point, sel []int, lo, m int) batch {
	b = batch{b.obs[:m], b.pts[:m], b.near[:m], b.h[:m]}
	for k := range m {
		i := lo + k
		if sel != nil {
			i = sel[i]
		}
		b.obs[k], b.pts[k] = i, obs[i]
	}
	return b
}

// add checks one observation: ret and reported are the engine's answer,
// near and h the brute force's.
func (r *Report) add(i int, o orb.Point, ref []orb.Point, ret int, reported float32, near int, h float64) {
	r.Checked++
	f := Failure{
		Obs: i, Returned: ret, Nearest: near,
		NearestMetres:  angle(h) * sphere.EarthRadiusMetres,
		ReportedMetres: float64(reported) * sphere.EarthRadiusMetres,
	}
	if ret < 0 || ret >= len(ref) {
		r.IndexWrong++
		f.ReturnedMetres = math.NaN()
		r.fail(f)
		return
	}
	f.ReturnedMetres = HaversineMetres(o, ref[ret])
	// Both tallies run whatever the first finds: each keeps its own
	// counter and maximum.
	indexBad := r.tallyExcess(f)
	distanceBad := r.tallyDistanceError(f)
	if indexBad || distanceBad {
		r.fail(f)
	}
}

// tallyExcess records how much farther f's returned reference is than the
// nearest, and reports whether that makes the index wrong.
func (r *Report) tallyExcess(f Failure) bool {
	// Both distances come from the same float64 function, so the excess is
	// never negative.
	excess := f.ReturnedMetres - f.NearestMetres
	r.MaxExcess = max(r.MaxExcess, excess)
	if excess > Tolerance {
		r.IndexWrong++
		return true
	}
	if f.Returned != f.Nearest {
		r.Ties++
	}
	return false
}

// tallyDistanceError records how far f's reported distance is from the
// distance to the returned reference, and reports whether it is wrong.
func (r *Report) tallyDistanceError(f Failure) bool {
	derr := math.Abs(f.ReportedMetres - f.ReturnedMetres)
	if math.IsNaN(derr) {
		derr = math.Inf(1)
	}
	r.MaxDistanceError = max(r.MaxDistanceError, derr)
	if derr > Tolerance {
		r.DistanceWrong++
		return true
	}
	return false
}

func (r *Report) fail(f Failure) {
	if len(r.Failures) < MaxFailures {
		r.Failures = append(r.Failures, f)
	}
}
