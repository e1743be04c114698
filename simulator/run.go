package simulator

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"time"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/engine"
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

	// Options opens the one geoknn.Searcher that answers every step.
	Options geoknn.Options
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
	// Result holds the step's answers; it is the callback's to keep.
	Result *geoknn.Result
	// Query is the wall time of the query; Update the time spent moving
	// references, replacing observations and counting changes before it.
	Query, Update time.Duration
	// Replaced is the number of observations replaced before this step
	// (0 at step 1).
	Replaced int
	// Changed counts the observations that were not replaced whose nearest
	// reference differs from the previous step's (compared by observation
	// index); ChangedFraction is Changed over the observations not replaced
	// (0 at step 1). Replaced observations are counted in Replaced only.
	Changed         int
	ChangedFraction float64
}

// Summary describes a finished (or interrupted) simulation.
type Summary struct {
	// Steps is the number of steps completed.
	Steps int
	// Engine, Devices and Fallback are the searcher's, as in geoknn.Result.
	Engine   string
	Devices  []string
	Fallback string
	// Median, Min and Max are over the steps' query times; Query and Update
	// are the totals of Step.Query and Step.Update.
	Median, Min, Max time.Duration
	Query, Update    time.Duration
	// StepsPerSecond is Steps / (Query + Update): the simulation's rate,
	// not counting setup or the time spent in the callback.
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
	defer func() {
		sum.Steps = len(queries)
		if len(queries) > 0 {
			sorted := slices.Clone(queries)
			slices.Sort(sorted)
			sum.Min, sum.Max = sorted[0], sorted[len(sorted)-1]
			if m := len(sorted); m%2 == 1 {
				sum.Median = sorted[m/2]
			} else {
				sum.Median = (sorted[m/2-1] + sorted[m/2]) / 2
			}
		}
		if t := (sum.Query + sum.Update).Seconds(); t > 0 {
			sum.StepsPerSecond = float64(sum.Steps) / t
		}
	}()

	var prev *geoknn.Result
	for n := 1; n <= cfg.Steps; n++ {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		st := Step{N: n, Time: float64(n-1) * cfg.Dt, Obs: obs, Ref: ref}
		t := time.Now()
		if n > 1 {
			mv.step(cfg.Dt, workers)
			if rep != nil {
				rep.replace(n, obsLat, obsLon, slots)
				st.Replaced = len(slots)
			}
		}
		st.Update = time.Since(t)
		t = time.Now()
		res, err := s.NearestRadians(ctx, obs, ref)
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return sum, ctxErr
			}
			return sum, fmt.Errorf("simulator: step %d: %w", n, err)
		}
		st.Query = time.Since(t)
		st.Result = res
		if prev != nil {
			t = time.Now()
			st.Changed = countChanged(prev.Index, res.Index, slots[:st.Replaced], workers)
			st.Update += time.Since(t)
			if kept := nObs - st.Replaced; kept > 0 {
				st.ChangedFraction = float64(st.Changed) / float64(kept)
			}
		}
		queries = append(queries, st.Query)
		sum.Query += st.Query
		sum.Update += st.Update
		sum.Devices = res.Devices
		prev = res
		if onStep != nil {
			if err := onStep(st); err != nil {
				return sum, err
			}
		}
	}
	return sum, nil
}

// countChanged counts the indices i where a[i] != b[i], leaving out the
// (increasing) replaced slots.
func countChanged(a, b []uint32, replaced []uint32, workers int) int {
	var total atomic.Int64
	parallelBlocks(len(a), workers, func(lo, hi int) {
		c := 0
		for i := lo; i < hi; i++ {
			if a[i] != b[i] {
				c++
			}
		}
		total.Add(int64(c))
	})
	c := int(total.Load())
	for _, i := range replaced {
		if a[i] != b[i] {
			c--
		}
	}
	return c
}
