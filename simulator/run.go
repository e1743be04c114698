package simulator

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/engine"
	"github.com/geoknn/geoknn/internal/parallel"
)

// Config describes a simulation with moving references.
type Config struct {
	// Obs and Ref are the numbers of observations and references, drawn by
	// the generators ObsGen and RefGen ("sphere", "seed" or "clustered", see
	// ByName; "" means "sphere"). Observations use Seed and references
	// Seed+1, as `knn run` does, so step 1 asks the same query as
	// `knn run --obs Obs --ref Ref --seed Seed`.
	Obs, Ref       int
	ObsGen, RefGen string
	Seed           uint64
	// InitObs and InitRef, when they hold points, are the initial
	// observations or references instead of generated ones (they are
	// copied, never modified); Obs or Ref must then be 0 or their length.
	// Fresh observations that replace old ones still come from ObsGen.
	InitObs, InitRef engine.Points

	// Steps is the number of queries: step 1 is the initial state, and
	// before each later step the references move for Dt seconds and a
	// fraction Replace of the observations is replaced.
	Steps int
	// Dt is the time step in seconds.
	Dt float64
	// Every reference gets a speed uniform in [MinSpeed, MaxSpeed] metres
	// per second (a fixed speed when they are equal) and a heading uniform
	// in [0, 360°), drawn from Seed, and moves along its great circle.
	MinSpeed, MaxSpeed float64
	// Replace is the fraction of observations, in [0, 1], replaced by fresh
	// points from ObsGen before each step after the first: exactly
	// round(Replace*Obs) of them, a different random set every step.
	Replace float64

	// Options opens the one geoknn.Searcher that answers every step, through
	// a geoknn.Session that keeps the observations in the engine.
	Options geoknn.Options
	// Answers, if set, is asked before each step whether the step's answers
	// are wanted on the host: false leaves them in the engine (Step.Result's
	// Index and Distance are nil), which on a GPU saves copying them back.
	// The changed count is computed either way. Nil means every step.
	Answers func(step int) bool
}

// Step is one step of a simulation, as Run hands it to its callback.
type Step struct {
	// N is the step number, from 1 to Config.Steps; Time is the simulated
	// time in seconds, (N-1)*Dt.
	N    int
	Time float64
	// Obs and Ref are the current positions as float64 radian columns.
	// Run reuses them: they are valid only until the callback returns.
	Obs, Ref engine.Points
	// Result holds the step's answers; it is the callback's to keep. Its
	// Index and Distance are nil when Config.Answers declined them.
	Result *geoknn.Result
	// Query is the time the step spent in the query (preparing the
	// references and waiting for the answers, the changed count, and the
	// answers' copy back when wanted). Update is the host time of the
	// simulation's own work for the step: moving the references, drawing the
	// replaced observations and writing them into the host columns (done
	// while GPU queries run) and sending them to the engine. Wall is the
	// step's wall time: sending the replacements, then the query with the
	// host work that overlaps it.
	Query, Update, Wall time.Duration
	// Replaced is the number of observations replaced before this step
	// (0 at step 1).
	Replaced int
	// Changed counts the observations that were not replaced whose nearest
	// reference differs from the previous step's (compared by observation
	// index); ChangedFraction is Changed over the observations not replaced
	// (0 at step 1). Replaced observations are counted in Replaced only.
	Changed         int
	ChangedFraction float64
	// Stats is how the engine ran the query: device time by stage (GPU),
	// host time preparing the references, the grid plan in Note.
	Stats engine.SessionStats
}

// Summary describes a finished (or interrupted) simulation.
type Summary struct {
	// Steps is the number of steps completed.
	Steps int
	// Engine, Devices and Fallback are the searcher's, as in geoknn.Result.
	Engine   string
	Devices  []string
	Fallback string
	// Median, Min and Max are over the steps' query times; StepMedian is
	// the median of whole steps (Step.Wall); Query, Update and Wall are the
	// totals of Step.Query, Step.Update and Step.Wall.
	Median, Min, Max    time.Duration
	StepMedian          time.Duration
	Query, Update, Wall time.Duration
	// StepsPerSecond is Steps / Wall: the simulation's rate, not counting
	// setup or the time spent in the callback.
	StepsPerSecond float64
}

// Validate reports the first problem with the configuration, if any.
func (c *Config) Validate() error {
	if c.Steps < 1 {
		return fmt.Errorf("simulator: %d steps, want at least 1", c.Steps)
	}
	if err := checkCount("observations", c.Obs, c.InitObs); err != nil {
		return err
	}
	if err := checkCount("references", c.Ref, c.InitRef); err != nil {
		return err
	}
	if c.Ref == 0 && c.InitRef.Len() == 0 {
		return errors.New("simulator: no references")
	}
	for _, g := range []string{c.ObsGen, c.RefGen} {
		if _, err := blockByName(genName(g), 0); err != nil {
			return err
		}
	}
	if math.IsNaN(c.Dt) || math.IsInf(c.Dt, 0) {
		return fmt.Errorf("simulator: time step %v s is not finite", c.Dt)
	}
	if err := checkSpeeds(c.MinSpeed, c.MaxSpeed); err != nil {
		return err
	}
	return checkFraction(c.Replace)
}

func checkCount(what string, n int, init engine.Points) error {
	if n < 0 {
		return fmt.Errorf("simulator: negative number of %s %d", what, n)
	}
	if init.Len() > 0 && n != 0 && n != init.Len() {
		return fmt.Errorf("simulator: %d %s asked for, but %d given", n, what, init.Len())
	}
	if max(n, init.Len()) > math.MaxUint32 {
		return fmt.Errorf("simulator: %d %s: at most %d", max(n, init.Len()), what, uint64(math.MaxUint32))
	}
	if init.Len() > 0 {
		return init.Check("simulator: initial " + what)
	}
	return nil
}

func genName(g string) string {
	if g == "" {
		return "sphere"
	}
	return g
}

// initColumns returns float64 copies of init, or n points of the named
// generator.
func initColumns(init engine.Points, n int, gen string, seed uint64) (lat, lon []float64, err error) {
	if init.Len() > 0 {
		lat, lon = make([]float64, init.Len()), make([]float64, init.Len())
		for i := range lat {
			lat[i], lon[i] = init.At(i)
			lon[i] = max(-math.Pi, min(math.Pi, lon[i]))
			lat[i] = max(-math.Pi/2, min(math.Pi/2, lat[i]))
		}
		return lat, lon, nil
	}
	fill, err := RadiansByName(genName(gen))
	if err != nil {
		return nil, nil, err
	}
	lat, lon = make([]float64, n), make([]float64, n)
	return lat, lon, fill(n, seed, lat, lon)
}

// Run simulates cfg: it opens one geoknn.Searcher (cfg.Options), answers
// step 1 on the initial points, then for each later step moves the
// references for cfg.Dt seconds along their great circles and replaces
// round(cfg.Replace*Obs) observations with fresh ones before answering
// again, on the same searcher, so the engine keeps its state (GPU contexts,
// kernels, buffers) across steps. After every step it calls onStep, if not
// nil; an error from onStep stops the simulation and is returned.
//
// Everything is reproducible from cfg.Seed, whatever the number of cores.
// Run checks ctx before every step and passes it to every query, so a
// cancelled simulation stops promptly with ctx.Err(). The Summary covers the
// steps completed, also when Run returns an error.
func Run(ctx context.Context, cfg Config, onStep func(Step) error) (Summary, error) {
	if err := cfg.Validate(); err != nil {
		return Summary{}, err
	}
	return run(ctx, cfg, onStep, workers())
}

func run(ctx context.Context, cfg Config, onStep func(Step) error, workers int) (sum Summary, err error) {
	obsLat, obsLon, err := initColumns(cfg.InitObs, cfg.Obs, cfg.ObsGen, cfg.Seed)
	if err != nil {
		return Summary{}, err
	}
	refLat, refLon, err := initColumns(cfg.InitRef, cfg.Ref, cfg.RefGen, cfg.Seed+1)
	if err != nil {
		return Summary{}, err
	}
	nObs, nRef := len(obsLat), len(refLat)
	mv := &Movers{Lat: refLat, Lon: refLon, Heading: make([]float64, nRef), Speed: make([]float64, nRef)}
	if err := RandomMotion(nRef, cfg.Seed, cfg.MinSpeed, cfg.MaxSpeed, mv.Speed, mv.Heading); err != nil {
		return Summary{}, err
	}
	var rep *replacer
	var slots []uint32
	if k := replaceCount(cfg.Replace, nObs); k > 0 {
		gen, err := blockByName(genName(cfg.ObsGen), cfg.Seed)
		if err != nil {
			return Summary{}, err
		}
		rep = newReplacer(cfg.Replace, gen, cfg.Seed, workers)
		slots = make([]uint32, k)
	}

	s, err := geoknn.NewSearcher(cfg.Options)
	if err != nil {
		return Summary{}, err
	}
	defer func() {
		if cerr := s.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("simulator: closing the searcher: %w", cerr)
		}
	}()
	sum.Engine, sum.Fallback = s.Engine(), s.Fallback()
	obs := engine.Radians64(obsLat, obsLon)
	ref := engine.Radians64(mv.Lat, mv.Lon)
	queries := make([]time.Duration, 0, cfg.Steps)
	steps := make([]time.Duration, 0, cfg.Steps)
	defer func() {
		sum.Steps = len(queries)
		if len(queries) > 0 {
			sorted := slices.Clone(queries)
			slices.Sort(sorted)
			sum.Min, sum.Max = sorted[0], sorted[len(sorted)-1]
			sum.Median = median(sorted)
			sorted = slices.Clone(steps)
			slices.Sort(sorted)
			sum.StepMedian = median(sorted)
		}
		if t := sum.Wall.Seconds(); t > 0 {
			sum.StepsPerSecond = float64(sum.Steps) / t
		}
	}()

	// The observations stay in the engine (on the GPUs) for the whole run;
	// each step sends the replaced ones and the moved references. The host
	// draws step n+1's motion and replacements while step n's query runs on
	// the GPUs (into a second set of movers and the replacement buffers),
	// so a step costs about the longer of the two, not their sum.
	sess, err := s.NewSession(obs)
	if err != nil {
		return sum, fmt.Errorf("simulator: %w", err)
	}
	defer func() {
		if cerr := sess.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("simulator: closing the session: %w", cerr)
		}
	}()
	next := &Movers{Lat: make([]float64, nRef), Lon: make([]float64, nRef), Heading: make([]float64, nRef), Speed: mv.Speed}
	// Replacements, double-buffered: step n's are written into the host
	// columns while step n+1's are drawn, both during step n's query.
	type replacement struct {
		slots          []uint32
		newLat, newLon []float64
	}
	var reps [2]replacement
	if rep != nil {
		for k := range reps {
			reps[k] = replacement{slots: make([]uint32, len(slots)),
				newLat: make([]float64, len(slots)), newLon: make([]float64, len(slots))}
		}
	}
	// draw prepares step n: the movers advanced from the current ones into
	// next, and step n's replacements into reps[n%2].
	// The two halves touch disjoint data and each leaves cores idle at its
	// end, so they run side by side.
	draw := func(n int) {
		var wg sync.WaitGroup
		if rep != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := &reps[n%2]
				rep.draw(n, nObs, r.slots, r.newLat, r.newLon)
			}()
		}
		copy(next.Lat, mv.Lat)
		copy(next.Lon, mv.Lon)
		copy(next.Heading, mv.Heading)
		next.step(cfg.Dt, workers)
		wg.Wait()
	}
	// write applies step n's replacements to the host columns: scattered
	// writes over the whole set, a cache and TLB miss each, so spread over
	// the cores.
	write := func(n int) {
		r := &reps[n%2]
		parallel.Blocks(len(r.slots), 1<<13, workers, func(_, lo, hi int) {
			for k := lo; k < hi; k++ {
				obsLat[r.slots[k]], obsLon[r.slots[k]] = r.newLat[k], r.newLon[k]
			}
		})
	}
	var drawn time.Duration // the host time spent drawing and writing the coming step
	for n := 1; n <= cfg.Steps; n++ {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		t0 := time.Now()
		st := Step{N: n, Time: float64(n-1) * cfg.Dt}
		if n > 1 {
			mv, next = next, mv
			ref = engine.Radians64(mv.Lat, mv.Lon)
			if rep != nil {
				r := &reps[n%2]
				if err := sess.Replace(ctx, r.slots, engine.Radians64(r.newLat, r.newLon)); err != nil {
					return sum, fmt.Errorf("simulator: step %d: %w", n, err)
				}
				st.Replaced = len(r.slots)
			}
			st.Update = drawn + time.Since(t0)
		}
		st.Obs, st.Ref = obs, ref
		// Start returns once the GPUs have the query; the host then writes
		// this step's replacements into its columns and draws the next
		// step, and Wait collects the answers.
		t := time.Now()
		answers := cfg.Answers == nil || cfg.Answers(n)
		var res *geoknn.Result
		var qs engine.SessionStats
		q, err := sess.Start(ctx, ref, answers)
		st.Query = time.Since(t)
		drawn = 0
		if err == nil {
			t = time.Now()
			// Writing this step's replacements and drawing the next step's
			// touch different buffers: side by side too.
			var wg sync.WaitGroup
			if n > 1 && rep != nil {
				wg.Add(1)
				go func() {
					defer wg.Done()
					write(n)
				}()
			}
			if n < cfg.Steps {
				draw(n + 1)
			}
			wg.Wait()
			drawn = time.Since(t)
			t = time.Now()
			res, qs, err = q.Wait()
			st.Query += time.Since(t)
		} else if n > 1 && rep != nil {
			write(n) // keep the host columns whole for the caller
		}
		st.Wall = time.Since(t0)
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return sum, ctxErr
			}
			return sum, fmt.Errorf("simulator: step %d: %w", n, err)
		}
		st.Result, st.Stats = res, qs
		if n > 1 {
			st.Changed = qs.Changed
			if kept := nObs - st.Replaced; kept > 0 {
				st.ChangedFraction = float64(st.Changed) / float64(kept)
			}
		}
		queries = append(queries, st.Query)
		steps = append(steps, st.Wall)
		sum.Query += st.Query
		sum.Update += st.Update
		sum.Wall += st.Wall
		sum.Devices = res.Devices
		if onStep != nil {
			if err := onStep(st); err != nil {
				return sum, err
			}
		}
	}
	return sum, nil
}

// median of a sorted, non-empty slice.
func median(sorted []time.Duration) time.Duration {
	if m := len(sorted); m%2 == 1 {
		return sorted[m/2]
	}
	m := len(sorted)
	return (sorted[m/2-1] + sorted[m/2]) / 2
}
