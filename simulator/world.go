package simulator

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/internal/parallel"
	"github.com/geoknn/geoknn/sphere"
)

// world is the state of a running simulation: the observations' host
// columns, the moving references, the replacements and the engine session
// that answers every step.
type world struct {
	cfg     Config
	workers int

	obsLat, obsLon []float64
	obs            geoknn.Points // obsLat and obsLon as the engine reads them
	// mv holds the current references; next receives the coming step's,
	// drawn while the current step's query runs, and the two swap at every
	// step.
	mv, next *Movers
	rep      *replacer     // nil when nothing is replaced
	part     *partReplacer // a part's: the whole simulation's replacements in it
	// Replacements, double-buffered: step n's are written into the host
	// columns while step n+1's are drawn, both during step n's query.
	reps [2]replacement

	searcher *geoknn.Searcher
	sess     *geoknn.Session
	drawn    time.Duration // the host time spent drawing and writing the coming step
	// inside: the steps are made inside the session (Session.Advance): the
	// references move and the replacements are drawn where the points
	// live (on GPUs: on the device), and the host columns are read back
	// only for the steps whose answers are wanted. It needs an observation
	// generator with an indexed form (sphere, seed).
	inside bool
}

// replacement is one step's replaced observations: slots[k] gets the
// fresh point (newLat[k], newLon[k]).
type replacement struct {
	slots          []uint32
	newLat, newLon []float64
}

// newWorld sets up cfg's initial state: the observations, the references
// and their motion, and the replacer with its buffers.
func newWorld(cfg Config, workers int) (*world, error) {
	init := initColumns
	if cfg.Part.set() {
		init = func(geoknn.Points, int, string, uint64) ([]float64, []float64, error) { return partColumns(cfg) }
	}
	obsLat, obsLon, err := init(cfg.InitObs, cfg.Obs, cfg.ObsGen, cfg.Seed)
	if err != nil {
		return nil, err
	}
	mv, err := initMovers(cfg)
	if err != nil {
		return nil, err
	}
	n := mv.Len()
	w := &world{cfg: cfg, workers: workers,
		obsLat: obsLat, obsLon: obsLon, obs: geoknn.Radians64(obsLat, obsLon), mv: mv}
	// A part's steps are made on the host when observations are replaced:
	// a session inside draws the replacements of its own observations, not
	// of the whole's. With none replaced, the movers alone step, the same
	// on every part's session, and the host sends nothing a step (an MPI
	// rank's step took 3.7 ms on the host path, 1 ms in one process).
	_, indexed := sphere.IndexedByName(genName(cfg.ObsGen))
	if (indexed && !cfg.Part.set()) || (cfg.Part.set() && sphere.ReplaceCount(cfg.Replace, cfg.Obs) == 0) {
		w.inside = true
		return w, nil
	}
	w.next = &Movers{Lat: make([]float64, n), Lon: make([]float64, n), Heading: make([]float64, n), Speed: mv.Speed}
	if err := w.initReplacer(); err != nil {
		return nil, err
	}
	return w, nil
}

// initMovers returns cfg's initial references with their random speeds and
// headings.
func initMovers(cfg Config) (*Movers, error) {
	lat, lon, err := initColumns(cfg.InitRef, cfg.Ref, cfg.RefGen, cfg.Seed+1)
	if err != nil {
		return nil, err
	}
	n := len(lat)
	mv := &Movers{Lat: lat, Lon: lon, Heading: make([]float64, n), Speed: make([]float64, n)}
	if err := RandomMotion(n, cfg.Seed, cfg.MinSpeed, cfg.MaxSpeed, mv.Speed, mv.Heading); err != nil {
		return nil, err
	}
	return mv, nil
}

// initReplacer sets up the replacer and both replacement buffers, unless
// the configuration replaces no observations.
func (w *world) initReplacer() error {
	k := sphere.ReplaceCount(w.cfg.Replace, len(w.obsLat))
	if w.cfg.Part.set() {
		k = sphere.ReplaceCount(w.cfg.Replace, w.cfg.Obs)
	}
	if k <= 0 {
		return nil
	}
	gen, err := sphere.NewGenerator(genName(w.cfg.ObsGen), w.cfg.Seed)
	if err != nil {
		return err
	}
	w.rep = newReplacer(w.cfg.Replace, gen, w.cfg.Seed, w.workers)
	if w.cfg.Part.set() {
		point, _ := sphere.IndexedByName(genName(w.cfg.ObsGen))
		w.part = &partReplacer{replacer: w.rep, n: w.cfg.Obs, part: w.cfg.Part, point: point}
		return nil // its buffers grow with each step's draw
	}
	for i := range w.reps {
		w.reps[i] = replacement{slots: make([]uint32, k), newLat: make([]float64, k), newLon: make([]float64, k)}
	}
	return nil
}

// simulate runs the steps on a session of s, recording each in t and
// handing it to onStep.
//
// The observations stay in the engine (on the GPUs) for the whole run;
// each step sends the replaced ones and the moved references. The host
// draws step n+1's motion and replacements while step n's query runs on
// the GPUs (into a second set of movers and the replacement buffers),
// so a step costs about the longer of the two, not their sum.
func (w *world) simulate(ctx context.Context, s *geoknn.Searcher, onStep func(Step) error, t *tally) (err error) {
	w.searcher = s
	if w.sess, err = s.NewSession(w.obs); err != nil {
		return fmt.Errorf("simulator: %w", err)
	}
	defer closeInto(&err, w.sess.Close, "the session")
	if w.inside {
		m := geoknn.Movers{LatRad: w.mv.Lat, LonRad: w.mv.Lon, HeadingRad: w.mv.Heading, SpeedMetresPerSecond: w.mv.Speed}
		if err := w.sess.SetMovers(ctx, m); err != nil {
			return fmt.Errorf("simulator: %w", err)
		}
	}
	for n := 1; n <= w.cfg.Steps; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		st, err := w.step(ctx, n)
		if err != nil {
			return err
		}
		t.add(st)
		if onStep != nil {
			if err := onStep(st); err != nil {
				return err
			}
		}
	}
	return nil
}

// step runs step n: it brings the references and observations up to
// date, then answers the query.
func (w *world) step(ctx context.Context, n int) (Step, error) {
	t0 := time.Now()
	st := Step{N: n, Time: float64(n-1) * w.cfg.Dt}
	if n > 1 {
		replaced, err := w.advance(ctx, n)
		if err != nil {
			return Step{}, err
		}
		st.Replaced = replaced
		st.Phases.Replace = time.Since(t0)
		st.Update = w.drawn + st.Phases.Replace
	}
	st.Obs, st.Ref = w.obs, geoknn.Radians64(w.mv.Lat, w.mv.Lon)
	query := w.query
	if w.inside {
		query = w.queryInside
	}
	res, qs, err := query(ctx, n, &st)
	st.Wall = time.Since(t0)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return Step{}, ctxErr
		}
		return Step{}, fmt.Errorf("simulator: step %d: %w", n, err)
	}
	res.Stats = qs.Stats
	st.Result, st.Stats = res, qs
	if n > 1 {
		st.Changed = qs.Changed
		if kept := len(w.obsLat) - st.Replaced; kept > 0 {
			st.ChangedFraction = float64(st.Changed) / float64(kept)
		}
	}
	return st, nil
}

// advance makes step n's references (drawn during the previous step's
// query) current and sends its replacements to the engine. It returns the
// number of observations replaced.
func (w *world) advance(ctx context.Context, n int) (int, error) {
	if w.inside {
		a := geoknn.Advance{DtSeconds: w.cfg.Dt, Fraction: w.cfg.Replace, Seed: w.cfg.Seed, Step: uint64(n)}
		if a.Fraction > 0 { // a generator only where points are drawn
			gen, err := geoknn.ParseGenerator(genName(w.cfg.ObsGen))
			if err != nil {
				return 0, fmt.Errorf("simulator: step %d: %w", n, err)
			}
			a.Gen = gen
		}
		if err := w.sess.Advance(ctx, a); err != nil {
			return 0, fmt.Errorf("simulator: step %d: %w", n, err)
		}
		return sphere.ReplaceCount(w.cfg.Replace, len(w.obsLat)), nil
	}
	w.mv, w.next = w.next, w.mv
	if w.rep == nil {
		return 0, nil
	}
	r := &w.reps[n%2]
	if err := w.sess.Replace(ctx, r.slots, geoknn.Radians64(r.newLat, r.newLon)); err != nil {
		return 0, fmt.Errorf("simulator: step %d: %w", n, err)
	}
	return len(r.slots), nil
}

// query answers step n for st.Ref and sets st.Query. Start returns once
// the GPUs have the query; the host then writes this step's replacements
// into its columns and draws the next step, and Wait collects the answers.
func (w *world) query(ctx context.Context, n int, st *Step) (*geoknn.Result, geoknn.SessionStats, error) {
	t := time.Now()
	res := &geoknn.Result{Fallback: w.searcher.Fallback()}
	into := res
	if w.cfg.Answers != nil && !w.cfg.Answers(n) {
		into = nil // the answers stay in the engine
	}
	q, err := w.sess.Start(ctx, st.Ref, into)
	st.Phases.Start = time.Since(t)
	st.Query = st.Phases.Start
	w.drawn = 0
	if err != nil {
		if n > 1 && w.rep != nil {
			w.write(n) // keep the host columns whole for the caller
		}
		return nil, geoknn.SessionStats{}, err
	}
	t = time.Now()
	w.overlap(n)
	w.drawn = time.Since(t)
	st.Phases.Host = w.drawn
	t = time.Now()
	qs, err := q.Wait()
	st.Phases.Wait = time.Since(t)
	st.Query += st.Phases.Wait
	return res, qs, err
}

// queryInside answers step n against the session's movers. The host has
// nothing to do meanwhile; the positions are read back only when the
// step's answers are wanted (else st.Obs and st.Ref are left empty).
func (w *world) queryInside(ctx context.Context, n int, st *Step) (*geoknn.Result, geoknn.SessionStats, error) {
	t := time.Now()
	res := &geoknn.Result{Fallback: w.searcher.Fallback()}
	into := res
	if w.cfg.Answers != nil && !w.cfg.Answers(n) {
		into = nil
	}
	q, err := w.sess.StartMovers(ctx, into)
	st.Phases.Start = time.Since(t)
	if err != nil {
		return nil, geoknn.SessionStats{}, err
	}
	t = time.Now()
	qs, err := q.Wait()
	st.Phases.Wait = time.Since(t)
	st.Query = st.Phases.Start + st.Phases.Wait
	if err != nil {
		return nil, qs, err
	}
	if into == nil {
		st.Obs, st.Ref = geoknn.Points{}, geoknn.Points{}
		return res, qs, nil
	}
	err = w.sess.Positions(ctx, w.obsLat, w.obsLon, w.mv.Lat, w.mv.Lon)
	return res, qs, err
}

// overlap is the host's work during step n's query. Writing this step's
// replacements and drawing the next step's touch different buffers: side
// by side too.
func (w *world) overlap(n int) {
	var wg sync.WaitGroup
	if n > 1 && w.rep != nil {
		wg.Go(func() { w.write(n) })
	}
	if n < w.cfg.Steps {
		w.draw(n + 1)
	}
	wg.Wait()
}

// draw prepares step n: the movers advanced from the current ones into
// next, and step n's replacements into reps[n%2].
// The two halves touch disjoint data and each leaves cores idle at its
// end, so they run side by side.
func (w *world) draw(n int) {
	var wg sync.WaitGroup
	if w.rep != nil {
		wg.Go(func() {
			r := &w.reps[n%2]
			if w.part != nil {
				w.part.draw(n, r)
				return
			}
			w.rep.draw(n, len(w.obsLat), r.slots, r.newLat, r.newLon)
		})
	}
	copy(w.next.Lat, w.mv.Lat)
	copy(w.next.Lon, w.mv.Lon)
	copy(w.next.Heading, w.mv.Heading)
	w.next.step(w.cfg.Dt, w.workers)
	wg.Wait()
}

// write applies step n's replacements to the host columns: scattered
// writes over the whole set, a cache and TLB miss each, so spread over
// the cores.
func (w *world) write(n int) {
	r := &w.reps[n%2]
	parallel.Blocks(len(r.slots), 1<<13, w.workers, func(_, lo, hi int) {
		for k := lo; k < hi; k++ {
			w.obsLat[r.slots[k]], w.obsLon[r.slots[k]] = r.newLat[k], r.newLon[k]
		}
	})
}
