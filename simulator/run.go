package simulator

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/sphere"
)

// Config describes a simulation with moving references.
type Config struct {
	// Obs and Ref are the numbers of observations and references, drawn by
	// the generators ObsGen and RefGen ("sphere", "seed" or "clustered", see
	// sphere.ByName; "" means "sphere"). Observations use Seed and references
	// Seed+1, as `knn run` does, so step 1 asks the same query as
	// `knn run --obs Obs --ref Ref --seed Seed`.
	Obs, Ref       int
	ObsGen, RefGen string
	Seed           uint64
	// InitObs and InitRef, when they hold points, are the initial
	// observations or references instead of generated ones (they are
	// copied, never modified); Obs or Ref must then be 0 or their length.
	// Fresh observations that replace old ones still come from ObsGen.
	InitObs, InitRef geoknn.Points

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

	// Part, when set, makes the run the part Part of the simulation's
	// observations (see Part): Obs is then the whole simulation's count
	// (generated sets), and InitObs, if any, holds the part's own points.
	Part Part
}

// Step is one step of a simulation, as Run hands it to its callback.
type Step struct {
	// N is the step number, from 1 to Config.Steps; Time is the simulated
	// time in seconds, (N-1)*Dt.
	N    int
	Time float64
	// Obs and Ref are the current positions as float64 radian columns.
	// Run reuses them: they are valid only until the callback returns.
	// When the observations come from a generator with an indexed form
	// (sphere, seed), the steps are made inside the engine's session (on
	// GPUs, on the device) and the positions are read back only for the
	// steps whose answers are wanted: for the others both are empty.
	Obs, Ref geoknn.Points
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
	Stats geoknn.SessionStats
	// Phases splits Wall into its parts, one after another.
	Phases Phases
}

// Phases are the parts of a step's wall time, in the order they run.
type Phases struct {
	// Replace sends the step's replaced observations to the engine.
	Replace time.Duration
	// Start prepares the references and queues the query (Session.Start).
	Start time.Duration
	// Host is the host's work while the query runs: the replacements
	// written into the host columns and the next step drawn.
	Host time.Duration
	// Wait waits for the query to finish (Pending.Wait).
	Wait time.Duration
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
	Median, Min, Max time.Duration
	StepMedian       time.Duration
	// PhaseMedians is the median of each of the steps' Phases.
	PhaseMedians        Phases
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
	if c.Part.set() {
		if err := checkPart(c.Part, c.Obs, c.InitObs); err != nil {
			return err
		}
	} else if err := checkCount("observations", c.Obs, c.InitObs); err != nil {
		return err
	}
	if err := checkCount("references", c.Ref, c.InitRef); err != nil {
		return err
	}
	if c.Ref == 0 && c.InitRef.Len() == 0 {
		return errors.New("simulator: no references")
	}
	for _, g := range []string{c.ObsGen, c.RefGen} {
		if _, err := sphere.NewGenerator(genName(g), 0); err != nil {
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

func checkCount(what string, n int, init geoknn.Points) error {
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
func initColumns(init geoknn.Points, n int, gen string, seed uint64) (lat, lon []float64, err error) {
	if init.Len() > 0 {
		lat, lon = make([]float64, init.Len()), make([]float64, init.Len())
		for i := range lat {
			lat[i], lon[i] = init.At(i)
			lon[i] = max(-math.Pi, min(math.Pi, lon[i]))
			lat[i] = max(-math.Pi/2, min(math.Pi/2, lat[i]))
		}
		return lat, lon, nil
	}
	fill, err := sphere.RadiansByName(genName(gen))
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
	return run(ctx, cfg, onStep, runtime.GOMAXPROCS(0))
}

// run is Run with the host work spread over the given number of workers.
func run(ctx context.Context, cfg Config, onStep func(Step) error, workers int) (_ Summary, err error) {
	w, err := newWorld(cfg, workers)
	if err != nil {
		return Summary{}, err
	}
	s, err := geoknn.NewSearcher(cfg.Options)
	if err != nil {
		return Summary{}, err
	}
	defer closeInto(&err, s.Close, "the searcher")
	t := tally{sum: Summary{Engine: s.Engine().String(), Fallback: s.Fallback()},
		queries: make([]time.Duration, 0, cfg.Steps), walls: make([]time.Duration, 0, cfg.Steps)}
	err = w.simulate(ctx, s, onStep, &t)
	return t.summary(), err
}

// closeInto calls closer and reports its failure in *err, unless *err
// already holds an earlier (more telling) error.
func closeInto(err *error, closer func() error, what string) {
	if cerr := closer(); cerr != nil && *err == nil {
		*err = fmt.Errorf("simulator: closing %s: %w", what, cerr)
	}
}

// tally collects the steps' times for the Summary.
type tally struct {
	sum            Summary
	queries, walls []time.Duration
	phases         [4][]time.Duration
}

// add records a completed step.
func (t *tally) add(st Step) {
	t.queries = append(t.queries, st.Query)
	t.walls = append(t.walls, st.Wall)
	for k, d := range [4]time.Duration{st.Phases.Replace, st.Phases.Start, st.Phases.Host, st.Phases.Wait} {
		t.phases[k] = append(t.phases[k], d)
	}
	t.sum.Query += st.Query
	t.sum.Update += st.Update
	t.sum.Wall += st.Wall
	t.sum.Devices = st.Stats.Devices
}

// summary is the Summary of the steps recorded so far.
func (t *tally) summary() Summary {
	sum := t.sum
	sum.Steps = len(t.queries)
	if len(t.queries) > 0 {
		sorted := slices.Clone(t.queries)
		slices.Sort(sorted)
		sum.Min, sum.Max = sorted[0], sorted[len(sorted)-1]
		sum.Median = median(sorted)
		sorted = slices.Clone(t.walls)
		slices.Sort(sorted)
		sum.StepMedian = median(sorted)
		var meds [4]time.Duration
		for k, ph := range t.phases {
			sorted = slices.Clone(ph)
			slices.Sort(sorted)
			meds[k] = median(sorted)
		}
		sum.PhaseMedians = Phases{Replace: meds[0], Start: meds[1], Host: meds[2], Wait: meds[3]}
	}
	if secs := sum.Wall.Seconds(); secs > 0 {
		sum.StepsPerSecond = float64(sum.Steps) / secs
	}
	return sum
}

// median of a sorted, non-empty slice.
func median(sorted []time.Duration) time.Duration {
	if m := len(sorted); m%2 == 1 {
		return sorted[m/2]
	}
	m := len(sorted)
	return (sorted[m/2-1] + sorted[m/2]) / 2
}
