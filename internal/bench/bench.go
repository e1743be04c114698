package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/paulmach/orb"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/internal/count"
	"github.com/geoknn/geoknn/validate"
)

// Verdicts of a case.
const (
	VerdictOK        = "ok"        // every sampled answer within validate.Tolerance
	VerdictApprox    = "approx"    // seed only: beyond 1 m but within SeedTolerance
	VerdictFail      = "FAIL"      // wrong answers: times not reported
	VerdictError     = "ERROR"     // the query failed
	VerdictUnchecked = "unchecked" // --validate 0
)

// SeedTolerance is how far, in metres, the seed algorithm's answers may be
// from the float64 truth and still be "approx" rather than FAIL: the
// float32 baseline kernel computes the haversine in float32 with fast
// trigonometry and is off by a few metres by design (2.5 m at 2^16
// references, 5 m at 2^8 measured on an H200).
const SeedTolerance = 10.0

// Config describes a sweep: every combination of engine, GPU count and
// algorithm is opened once (one geoknn.Searcher) and runs every generator
// and size pair.
type Config struct {
	Shapes     []Shape            // (obs, ref) cross products, swept in order
	Engines    []string           // cpu, gpu, auto (see ParseEngines)
	GPUs       string             // GPU-count spec (see ParseGPUs); "" means all
	Algorithms []geoknn.Algorithm // in table order
	Generators []string           // see ParseGenerators
	CitiesPath string             // references of the cities generator

	Seed     uint64 // observations use Seed, references Seed+1
	Warmup   int    // untimed runs per case
	Repeat   int    // timed runs per case (at least 1)
	Validate int    // sampled answers checked per case; 0 checks none

	// SeedMaxPairs caps the pairs of a seed-algorithm case. Above it the
	// case is timed on the first SeedMaxPairs/ref observations and its
	// times scaled by obs/measured (SeedScale), or skipped with a note.
	SeedMaxPairs float64
	SeedScale    bool

	BatchSize  int
	Memory     geoknn.MemoryMode
	CPUWorkers int

	CommandLine []string
	// Log receives a line for each note (skips) as it happens; nil discards.
	Log io.Writer
	// Progress, if it is a terminal, shows a progress bar; nil shows none.
	Progress io.Writer

	// Seams for tests: open opens a searcher, devices lists the GPUs.
	open    func(geoknn.Options) (searcher, error)
	devices func() ([]geoknn.DeviceInfo, int, error)
}

type searcher interface {
	Nearest(ctx context.Context, obs, ref geoknn.Points) (*geoknn.Result, error)
	Close() error
}

func openSearcher(opts geoknn.Options) (searcher, error) { return geoknn.NewSearcher(opts) }

// Summary is the median, minimum and maximum of a sample, in seconds.
type Summary struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

func summarize(xs []float64, scale float64) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Summary{Median: m * scale, Min: s[0] * scale, Max: s[len(s)-1] * scale}
}

// Validation is the outcome of checking a sample of a case's answers
// against the float64 haversine brute force (validate.Exact).
type Validation struct {
	Checked       int     `json:"checked"`
	IndexWrong    int     `json:"index_wrong"`
	DistanceWrong int     `json:"distance_wrong"`
	Ties          int     `json:"ties"`
	MaxExcessM    float64 `json:"max_excess_m"`
	// MaxDistanceErrorM is null when a reported distance was not finite.
	MaxDistanceErrorM *float64 `json:"max_distance_error_m"`
	Failures          []string `json:"failures,omitempty"`
}

// Case is one row of the sweep: its samples and what follows from them.
// Samples (wall_s, kernel_s, ...) are as measured, on MeasuredObs
// observations; the summaries and rates are scaled to Obs by Scale.
type Case struct {
	Engine    string  `json:"engine"` // cpu or gpu
	GPUs      int     `json:"gpus"`   // GPUs used; 0 on the CPU
	Algorithm string  `json:"algorithm"`
	Generator string  `json:"generator"`
	Obs       int     `json:"obs"`
	Ref       int     `json:"ref"`
	Pairs     float64 `json:"pairs"`
	// MeasuredObs is how many observations were queried: Obs, or fewer
	// for a seed case above SeedMaxPairs; Scale is Obs / MeasuredObs.
	MeasuredObs int      `json:"measured_obs"`
	Scale       float64  `json:"scale"`
	Devices     []string `json:"devices,omitempty"`

	WarmupWall []float64 `json:"warmup_wall_s,omitempty"`
	Wall       []float64 `json:"wall_s"`             // Searcher.Nearest, each timed run
	EngineWall []float64 `json:"engine_wall_s"`      // Stats.Wall
	Kernel     []float64 `json:"kernel_s,omitempty"` // Stats.Kernel (GPU)
	Refined    []int     `json:"refined,omitempty"`  // Stats.Refined (GPU)
	Jobs       int       `json:"jobs"`               // Stats.Jobs of the last run
	EngineNote string    `json:"engine_note,omitempty"`
	// EngineStats is the engine's Stats of the last timed run, as JSON.
	EngineStats map[string]any `json:"engine_stats,omitempty"`

	WallStats   Summary `json:"wall"`
	KernelStats Summary `json:"kernel"`
	// Rates from the medians: pairs and observations per second of wall
	// time, and pairs per second of kernel time.
	PairsPerSec       float64 `json:"pairs_per_s"`
	ObsPerSec         float64 `json:"obs_per_s"`
	KernelPairsPerSec float64 `json:"kernel_pairs_per_s,omitempty"`
	// Speed-ups over the seed case of the same engine, GPUs, generator and
	// sizes: seed median / this median, of wall and of kernel times; 0 when
	// there is none.
	SpeedupWall   float64 `json:"speedup_vs_seed_wall,omitempty"`
	SpeedupKernel float64 `json:"speedup_vs_seed_kernel,omitempty"`
	// SeedScaled says the seed case compared with was timed on fewer
	// observations and scaled.
	SeedScaled bool `json:"seed_scaled,omitempty"`
	// GPU brute: per cent of the FP32 instruction peak (see the legend).
	FP32PeakPct float64 `json:"fp32_peak_pct,omitempty"`
	// GPU grid: bytes moved / kernel median, the memory bandwidth of the
	// GPUs used, and the ratio in per cent.
	GBps          float64 `json:"gb_per_s,omitempty"`
	BandwidthGBps float64 `json:"bandwidth_gb_per_s,omitempty"`
	BandwidthPct  float64 `json:"bandwidth_pct,omitempty"`

	Verdict    string      `json:"verdict"`
	Validation *Validation `json:"validation,omitempty"`
	Error      string      `json:"error,omitempty"`
}

// Valid reports whether the case's times count as results.
func (c *Case) Valid() bool {
	return c.Verdict == VerdictOK || c.Verdict == VerdictApprox || c.Verdict == VerdictUnchecked
}

// Scaled reports whether the case was timed on fewer observations.
func (c *Case) Scaled() bool { return c.MeasuredObs < c.Obs }

// Label names the engine, GPUs and algorithm: "gpu×2 brute", "cpu grid".
func (c *Case) Label() string {
	if c.Engine == EngineGPU {
		return fmt.Sprintf("gpu×%d %s", c.GPUs, c.Algorithm)
	}
	return c.Engine + " " + c.Algorithm
}

func (c *Case) String() string {
	return fmt.Sprintf("%s %s %s×%s", c.Label(), c.Generator, FormatCount(c.Obs), FormatCount(c.Ref))
}

// Report is a sweep's outcome: the environment, the settings and one Case
// per row. It is what --json writes.
type Report struct {
	Schema      string    `json:"schema"`
	Started     time.Time `json:"started"`
	Seconds     float64   `json:"seconds"`
	CommandLine []string  `json:"command_line"`
	Env         Env       `json:"env"`
	Settings    Settings  `json:"settings"`
	Cases       []Case    `json:"cases"`
	Notes       []string  `json:"notes,omitempty"`
}

// Schema identifies the JSON layout.
const Schema = "geoknn-bench/1"

// Settings are the sweep's parameters as run.
type Settings struct {
	Shapes       []Shape  `json:"shapes"`
	Engines      []string `json:"engines"`
	GPUs         []int    `json:"gpus,omitempty"`
	Algorithms   []string `json:"algorithms"`
	Generators   []string `json:"generators"`
	CitiesPath   string   `json:"cities_path,omitempty"`
	Seed         uint64   `json:"seed"`
	Warmup       int      `json:"warmup"`
	Repeat       int      `json:"repeat"`
	Validate     int      `json:"validate"`
	SeedMaxPairs float64  `json:"seed_max_pairs"`
	SeedScale    bool     `json:"seed_scale"`
	BatchSize    int      `json:"batch_size"`
	Memory       string   `json:"memory"`
}

// Failed counts the cases whose verdict is FAIL or ERROR.
func (r *Report) Failed() int {
	n := 0
	for i := range r.Cases {
		if v := r.Cases[i].Verdict; v == VerdictFail || v == VerdictError {
			n++
		}
	}
	return n
}

// combo is one open searcher's worth of cases.
type combo struct {
	engine string
	gpus   int
	algo   geoknn.Algorithm
}

// label names the combo as its cases' Label does.
func (c combo) label() string {
	return (&Case{Engine: c.engine, GPUs: c.gpus, Algorithm: c.algo.String()}).Label()
}

// plan is one case of every combo: a generator and a size pair.
type plan struct {
	gen      string
	obs, ref int
}

// Run runs the sweep. It returns the report so far together with an error
// when ctx ends; errors in the configuration or reading the cities file stop
// it before any case runs. Failing cases do not stop it: their verdict says
// so (see Report.Failed).
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	cfg.setSeams()
	sw, err := newSweep(&cfg)
	if err != nil {
		return nil, err
	}
	sw.beginProgress()
	defer sw.bar.clear()
	for _, c := range sw.combos {
		if err := sw.runCombo(ctx, c); err != nil {
			return sw.rep.finish(), err
		}
	}
	return sw.rep.finish(), nil
}

// setSeams puts the real searcher and device list where a test did not
// put its own.
func (cfg *Config) setSeams() {
	if cfg.open == nil {
		cfg.open = openSearcher
	}
	if cfg.devices == nil {
		cfg.devices = geoknn.ListDevices
	}
}

// sweep is a running Run: the report it fills, the progress bar and the
// cases to run, every plan on every combo.
type sweep struct {
	cfg    *Config
	rep    *Report
	bar    *bar
	logw   io.Writer // where notes go as they happen
	data   *datasets
	combos []combo
	plans  []plan
	runs   int // warm-up and timed runs of a case
}

// newSweep reads the cities file if needed, lists the devices and plans
// the cases.
func newSweep(cfg *Config) (*sweep, error) {
	sw := &sweep{cfg: cfg, logw: cfg.Log, runs: cfg.Warmup + cfg.Repeat}
	if sw.logw == nil {
		sw.logw = io.Discard
	}
	sw.rep = &Report{Schema: Schema, Started: time.Now().UTC(), CommandLine: cfg.CommandLine}
	sw.bar = newBar(cfg.Progress)
	cities, err := cfg.cities()
	if err != nil {
		return nil, err
	}
	devs, driver, devErr := cfg.devices()
	sw.rep.Env = collectEnv(devs, driver, devErr)
	gpuCounts, err := ParseGPUs(orDefault(cfg.GPUs, "all"), len(devs))
	if err != nil {
		return nil, fmt.Errorf("--gpus: %w", err)
	}
	sw.rep.Settings = cfg.settings(gpuCounts)
	sw.combos = cfg.combos(devs, devErr, gpuCounts, sw.note)
	pairs := sizePairs(cfg.Shapes)
	maxObs, maxRef := maxSizes(pairs)
	sw.data = newDatasets(cfg.Seed, maxObs, maxRef, cities)
	sw.plans = planCases(cfg.Generators, pairs, cities)
	return sw, nil
}

// cities reads the cities file when a generator uses it; nil otherwise.
func (cfg *Config) cities() (*column, error) {
	if !slices.Contains(cfg.Generators, GenCities) {
		return nil, nil
	}
	return readCities(cfg.CitiesPath)
}

// maxSizes is the largest observation and reference counts of pairs.
func maxSizes(pairs [][2]int) (maxObs, maxRef int) {
	for _, p := range pairs {
		maxObs, maxRef = max(maxObs, p[0]), max(maxRef, p[1])
	}
	return maxObs, maxRef
}

// planCases lists the cases each combo runs, in order and once each: every
// generator with every size pair, the cities' references being the whole
// file.
func planCases(gens []string, pairs [][2]int, cities *column) []plan {
	var plans []plan
	for _, g := range gens {
		for _, p := range pairs {
			if g == GenCities {
				p[1] = cities.len()
			}
			if !slices.Contains(plans, plan{g, p[0], p[1]}) {
				plans = append(plans, plan{g, p[0], p[1]})
			}
		}
	}
	return plans
}

// note records a note in the report and logs it.
func (sw *sweep) note(format string, a ...any) {
	s := oneLine(fmt.Sprintf(format, a...))
	sw.rep.Notes = append(sw.rep.Notes, s)
	sw.bar.clear()
	fmt.Fprintln(sw.logw, "bench:", s)
}

// caseUnits is the progress a case counts: work in pairs, plus a little for
// each run's overhead.
func (sw *sweep) caseUnits(a geoknn.Algorithm, p plan) float64 {
	m, _ := sw.cfg.measured(a, p.obs, p.ref)
	return float64(m)*float64(p.ref) + 1e6
}

// units is the progress of every run of plans with algorithm a.
func (sw *sweep) units(a geoknn.Algorithm, plans []plan) float64 {
	units := 0.0
	for _, p := range plans {
		units += float64(sw.runs) * sw.caseUnits(a, p)
	}
	return units
}

// beginProgress starts the progress bar over every case of the sweep.
func (sw *sweep) beginProgress() {
	total := 0.0
	for _, c := range sw.combos {
		for _, p := range sw.plans {
			total += float64(sw.runs) * sw.caseUnits(c.algo, p)
		}
	}
	sw.bar.begin(total, len(sw.combos)*len(sw.plans))
}

// runCombo runs every plan on one searcher for c. An error (ctx ended, a
// data set failed) stops the sweep.
func (sw *sweep) runCombo(ctx context.Context, c combo) error {
	s, err := sw.cfg.open(sw.cfg.options(c, sw.bar))
	if err != nil {
		sw.skipCombo(c, err)
		return nil
	}
	for pi, p := range sw.plans {
		verdict, err := sw.runPlan(ctx, s, c, p)
		if err != nil {
			s.Close()
			return err
		}
		if rest := sw.plans[pi+1:]; verdict == VerdictError && len(rest) > 0 {
			// A failed GPU query usually leaves the context unusable:
			// the rest of this searcher's cases would fail the same way.
			sw.note("%s: its %d remaining case(s) skipped after the error", c.label(), len(rest))
			sw.bar.skip(sw.units(c.algo, rest), len(rest))
			break
		}
	}
	if err := s.Close(); err != nil {
		sw.note("%s: closing the engine: %v", c.label(), err)
	}
	return nil
}

// skipCombo notes a searcher that did not open and skips its cases.
func (sw *sweep) skipCombo(c combo, err error) {
	if c.engine == EngineCPU {
		// The CPU engine itself cannot fail to open: this is the
		// algorithm refusing to run there (seed is GPU only).
		sw.note("%s %s: skipped: %v", c.engine, c.algo, err)
	} else {
		sw.note("gpu×%d %s: skipped: cannot open the engine: %v", c.gpus, c.algo, err)
		sw.rep.Cases = append(sw.rep.Cases, Case{Engine: c.engine, GPUs: c.gpus, Algorithm: c.algo.String(),
			Verdict: VerdictError, Error: err.Error()})
	}
	sw.bar.skip(sw.units(c.algo, sw.plans), len(sw.plans))
}

// runPlan runs plan p on the searcher s opened for c, records the case and
// returns its verdict ("" when skipped). An error stops the sweep.
func (sw *sweep) runPlan(ctx context.Context, s searcher, c combo, p plan) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	obsCol, refCol, err := sw.data.get(p.gen)
	if err != nil {
		return "", err
	}
	k := Case{Engine: c.engine, GPUs: c.gpus, Algorithm: c.algo.String(), Generator: p.gen,
		Obs: p.obs, Ref: p.ref, Pairs: float64(p.obs) * float64(p.ref)}
	m, ok := sw.cfg.measured(c.algo, p.obs, p.ref)
	if !ok {
		sw.note("%s: skipped: %.3g pairs > --seed-max-pairs %.3g", k.String(), k.Pairs, sw.cfg.SeedMaxPairs)
		sw.bar.skip(float64(sw.runs)*sw.caseUnits(c.algo, p), 1)
		return "", nil
	}
	k.MeasuredObs, k.Scale = m, float64(p.obs)/float64(m)
	sw.bar.startCase(k.String(), sw.caseUnits(c.algo, p), sw.runs)
	err = sw.cfg.runCase(ctx, s, &k, obsCol, refCol, sw.bar)
	sw.rep.Cases = append(sw.rep.Cases, k)
	if err != nil && ctx.Err() != nil {
		return "", ctx.Err()
	}
	if k.Verdict == VerdictFail || k.Verdict == VerdictError {
		sw.note("%s: %s: %s", k.String(), k.Verdict, k.Error)
	}
	return k.Verdict, nil
}

// oneLine keeps the first line of a message (a joined error can hold many)
// and says how many more there were.
func oneLine(s string) string {
	first, rest, ok := strings.Cut(s, "\n")
	if !ok {
		return s
	}
	return fmt.Sprintf("%s (and %d more lines)", first, strings.Count(rest, "\n")+1)
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

func (cfg *Config) check() error {
	switch {
	case len(cfg.Shapes) == 0:
		return errors.New("no sizes to sweep")
	case len(cfg.Engines) == 0:
		return errors.New("no engine to sweep")
	case len(cfg.Algorithms) == 0:
		return errors.New("no algorithm to sweep")
	case len(cfg.Generators) == 0:
		return errors.New("no generator to sweep")
	case cfg.Repeat < 1:
		return fmt.Errorf("--repeat %d: want at least 1", cfg.Repeat)
	case cfg.Warmup < 0 || cfg.Validate < 0 || cfg.BatchSize < 0 || cfg.CPUWorkers < 0:
		return errors.New("--warmup, --validate and --batch-size must not be negative")
	case !(cfg.SeedMaxPairs > 0):
		return fmt.Errorf("--seed-max-pairs %v: want a positive count", cfg.SeedMaxPairs)
	}
	for _, s := range cfg.Shapes {
		if len(s.Obs) == 0 || len(s.Ref) == 0 {
			return errors.New("a shape without observation or reference sizes")
		}
		for _, n := range append(slices.Clone(s.Obs), s.Ref...) {
			if n < 1 || n > count.Max {
				return fmt.Errorf("size %d is not in [1, 2^40]", n)
			}
		}
	}
	return nil
}

func (cfg *Config) settings(gpus []int) Settings {
	st := Settings{Shapes: cfg.Shapes, Engines: cfg.Engines, GPUs: gpus, Generators: cfg.Generators,
		Seed: cfg.Seed, Warmup: cfg.Warmup, Repeat: cfg.Repeat, Validate: cfg.Validate,
		SeedMaxPairs: cfg.SeedMaxPairs, SeedScale: cfg.SeedScale, BatchSize: cfg.BatchSize, Memory: cfg.Memory.String()}
	if slices.Contains(cfg.Generators, GenCities) {
		st.CitiesPath = cfg.CitiesPath
	}
	for _, a := range cfg.Algorithms {
		st.Algorithms = append(st.Algorithms, a.String())
	}
	return st
}

// combos expands engines and GPU counts, noting what is skipped.
func (cfg *Config) combos(devs []geoknn.DeviceInfo, devErr error, gpuCounts []int, note func(string, ...any)) []combo {
	var out []combo
	for _, e := range cfg.engines(devs, devErr) {
		counts := []int{0}
		if e == EngineGPU {
			counts = usableGPUCounts(devs, devErr, gpuCounts, note)
		}
		for _, g := range counts {
			for _, a := range cfg.Algorithms {
				out = append(out, combo{engine: e, gpus: g, algo: a})
			}
		}
	}
	return out
}

// engines lists the engines to sweep, once each, auto resolved to gpu when
// GPUs were found, else cpu.
func (cfg *Config) engines(devs []geoknn.DeviceInfo, devErr error) []string {
	var engines []string
	for _, e := range cfg.Engines {
		if e == EngineAuto {
			e = EngineCPU
			if devErr == nil && len(devs) > 0 {
				e = EngineGPU
			}
		}
		if !slices.Contains(engines, e) {
			engines = append(engines, e)
		}
	}
	return engines
}

// usableGPUCounts is the GPU counts this host can run, noting the others
// (all of them without GPUs).
func usableGPUCounts(devs []geoknn.DeviceInfo, devErr error, gpuCounts []int, note func(string, ...any)) []int {
	switch {
	case errors.Is(devErr, cuda.ErrNoDriver):
		note("gpu cases skipped: no CUDA driver (libcuda.so.1 not found)")
		return nil
	case devErr != nil:
		note("gpu cases skipped: %v", devErr)
		return nil
	case len(devs) == 0:
		note("gpu cases skipped: no CUDA GPU on this host")
		return nil
	}
	var counts []int
	for _, g := range gpuCounts {
		if g > len(devs) {
			note("--gpus %d skipped: this host has %d GPU(s)", g, len(devs))
			continue
		}
		counts = append(counts, g)
	}
	return counts
}

func (cfg *Config) options(c combo, bar *bar) geoknn.Options {
	o := geoknn.Options{Engine: geoknn.CPU, Algorithm: c.algo, BatchSize: cfg.BatchSize,
		Memory: cfg.Memory, CPUWorkers: cfg.CPUWorkers}
	if c.engine == EngineGPU {
		o.Engine, o.GPUs = geoknn.GPU, c.gpus
	}
	if bar.line.Enabled() {
		o.Progress = bar.run
	}
	return o
}

// measured is how many observations a case queries, and false when the case
// is skipped (seed above SeedMaxPairs without SeedScale).
func (cfg *Config) measured(a geoknn.Algorithm, obs, ref int) (int, bool) {
	if a != geoknn.Seed || float64(obs)*float64(ref) <= cfg.SeedMaxPairs {
		return obs, true
	}
	if !cfg.SeedScale {
		return 0, false
	}
	return max(1, min(obs, int(cfg.SeedMaxPairs/float64(ref)))), true
}

// runCase runs the warm-up and timed runs of one case on the open searcher
// and validates the last answer; the error is that of a failed query (also
// recorded in the case).
func (cfg *Config) runCase(ctx context.Context, s searcher, k *Case, obsCol, refCol *column, bar *bar) error {
	last, err := cfg.timeRuns(ctx, s, k, obsCol.points(k.MeasuredObs), refCol.points(k.Ref), bar)
	if err != nil {
		k.Verdict, k.Error = VerdictError, err.Error()
		return err
	}
	k.EngineStats = statsMap(last.Stats)
	k.EngineNote, _ = k.EngineStats["Note"].(string)
	if cfg.Validate == 0 {
		k.Verdict = VerdictUnchecked
		return nil
	}
	return cfg.validateCase(ctx, k, obsCol, refCol, last)
}

// timeRuns runs the query cfg.Warmup+cfg.Repeat times, recording the
// times in k, and returns the last answers.
func (cfg *Config) timeRuns(ctx context.Context, s searcher, k *Case, obs, ref geoknn.Points, bar *bar) (*geoknn.Result, error) {
	var last *geoknn.Result
	for r := 0; r < cfg.Warmup+cfg.Repeat; r++ {
		bar.startRun(r)
		runtime.GC() // the previous answer is garbage: collect it untimed
		t := time.Now()
		res, err := s.Nearest(ctx, obs, ref)
		wall := time.Since(t).Seconds()
		bar.endRun()
		if err != nil {
			return nil, err
		}
		if r < cfg.Warmup {
			k.WarmupWall = append(k.WarmupWall, wall)
			continue
		}
		k.Wall = append(k.Wall, wall)
		k.EngineWall = append(k.EngineWall, res.Stats.Wall.Seconds())
		if res.Stats.Engine == EngineGPU {
			k.Kernel = append(k.Kernel, res.Stats.Kernel.Seconds())
			k.Refined = append(k.Refined, res.Stats.Refined)
		}
		k.Devices, k.Jobs = res.Stats.Devices, res.Stats.Jobs
		last = res
	}
	return last, nil
}

// validateCase checks cfg.Validate sampled answers of res and sets the
// case's verdict; the error is that of a failed check.
func (cfg *Config) validateCase(ctx context.Context, k *Case, obsCol, refCol *column, res *geoknn.Result) error {
	v, err := checkSample(ctx, sampleCheck{obs: obsCol, ref: refCol, nobs: k.MeasuredObs, nref: k.Ref, res: res, n: cfg.Validate, seed: cfg.Seed})
	if err != nil {
		k.Verdict, k.Error = VerdictError, "validation: "+err.Error()
		return err
	}
	k.Validation = v
	k.Verdict = verdict(k.Algorithm, v)
	if k.Verdict == VerdictFail {
		k.Error = fmt.Sprintf("%d of %d sampled answers wrong (max excess %.3f m)", v.IndexWrong+v.DistanceWrong, v.Checked, v.MaxExcessM)
		if len(v.Failures) > 0 {
			k.Error += "; " + v.Failures[0]
		}
	}
	return nil
}

// statsMap is the engine's Stats as a JSON object, read back so that the
// harness records every field (and the Note: grid shape, or why grid fell
// back to brute force) without depending on them.
func statsMap(st geoknn.Stats) map[string]any {
	raw, err := json.Marshal(st)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

func verdict(algo string, v *Validation) string {
	if v.IndexWrong == 0 && v.DistanceWrong == 0 {
		return VerdictOK
	}
	if algo == geoknn.Seed.String() && v.MaxExcessM <= SeedTolerance &&
		v.MaxDistanceErrorM != nil && *v.MaxDistanceErrorM <= SeedTolerance {
		return VerdictApprox
	}
	return VerdictFail
}

// sampleCheck is what checkSample checks: n answers of res, drawn with
// seed from the first nobs observations of obs, against the first nref
// references of ref.
type sampleCheck struct {
	obs, ref   *column
	nobs, nref int
	res        *geoknn.Result
	n          int
	seed       uint64
}

// checkSample checks the sample's answers, drawn reproducibly, against
// the float64 haversine brute force (validate.Exact on orb.Points built
// for the sample only).
func checkSample(ctx context.Context, sc sampleCheck) (*Validation, error) {
	idx := validate.SampleIndices(sc.nobs, sc.n, sc.seed)
	obsPts := make([]orb.Point, len(idx))
	index := make([]uint32, len(idx))
	dist := make([]float32, len(idx))
	for k, i := range idx {
		obsPts[k], index[k], dist[k] = sc.obs.point(i), sc.res.Index[i], sc.res.DistanceRad[i]
	}
	r, err := validate.Exact(ctx, obsPts, sc.ref.degrees(sc.nref), index, dist)
	if err != nil {
		return nil, err
	}
	v := &Validation{Checked: r.Checked, IndexWrong: r.IndexWrong, DistanceWrong: r.DistanceWrong,
		Ties: r.Ties, MaxExcessM: r.MaxExcess}
	if !math.IsInf(r.MaxDistanceError, 0) && !math.IsNaN(r.MaxDistanceError) {
		d := r.MaxDistanceError
		v.MaxDistanceErrorM = &d
	}
	for _, f := range r.Failures {
		f.Obs = idx[f.Obs] // the sample's position back to the observation's index
		v.Failures = append(v.Failures, f.String())
	}
	return v, nil
}

// finish stamps the duration and derives the rates, peaks and speed-ups.
func (r *Report) finish() *Report {
	r.Seconds = time.Since(r.Started).Seconds()
	r.Derive()
	return r
}

// Derive computes each case's summaries, rates, % of peak and speed-up over
// seed from its samples, the device list and the other cases.
func (r *Report) Derive() {
	for i := range r.Cases {
		c := &r.Cases[i]
		c.deriveRates()
		if c.Engine != EngineGPU || c.KernelStats.Median <= 0 || c.GPUs > len(r.Env.Devices) {
			continue
		}
		c.derivePeaks(r.Env.Devices[:c.GPUs])
	}
	r.deriveSpeedups()
}

// deriveRates computes the case's summaries and rates from its samples.
func (c *Case) deriveRates() {
	if c.Scale == 0 {
		c.Scale = 1
	}
	c.WallStats = summarize(c.Wall, c.Scale)
	c.KernelStats = summarize(c.Kernel, c.Scale)
	c.PairsPerSec, c.ObsPerSec, c.KernelPairsPerSec = 0, 0, 0
	c.FP32PeakPct, c.GBps, c.BandwidthGBps, c.BandwidthPct = 0, 0, 0, 0
	if c.WallStats.Median > 0 {
		c.PairsPerSec = c.Pairs / c.WallStats.Median
		c.ObsPerSec = float64(c.Obs) / c.WallStats.Median
	}
	if c.KernelStats.Median > 0 {
		c.KernelPairsPerSec = c.Pairs / c.KernelStats.Median
	}
}

// derivePeaks computes a GPU case's share of the peaks of the devices it
// ran on: FP32 instructions for brute, memory bandwidth for grid.
func (c *Case) derivePeaks(devices []Device) {
	var instr, bw float64
	for _, d := range devices {
		instr += d.FP32PeakFLOPS / 2
		bw += d.MemoryBandwidth
	}
	switch c.Algorithm {
	case "brute":
		if instr > 0 {
			c.FP32PeakPct = 100 * c.KernelPairsPerSec * InstructionsPerPair / instr
		}
	case "grid":
		c.GBps = float64(c.Obs) * BytesPerObs / c.KernelStats.Median / 1e9
		if bw > 0 {
			c.BandwidthGBps = bw / 1e9
			c.BandwidthPct = 100 * c.GBps / c.BandwidthGBps
		}
	}
}

// deriveSpeedups compares every valid case with the seed case of the same
// engine, GPUs, generator and sizes.
func (r *Report) deriveSpeedups() {
	type key struct {
		engine   string
		gpus     int
		gen      string
		obs, ref int
	}
	seeds := map[key]*Case{}
	for i := range r.Cases {
		c := &r.Cases[i]
		if c.Algorithm == geoknn.Seed.String() && c.Valid() && c.WallStats.Median > 0 {
			seeds[key{c.Engine, c.GPUs, c.Generator, c.Obs, c.Ref}] = c
		}
	}
	for i := range r.Cases {
		c := &r.Cases[i]
		c.SpeedupWall, c.SpeedupKernel, c.SeedScaled = 0, 0, false
		s := seeds[key{c.Engine, c.GPUs, c.Generator, c.Obs, c.Ref}]
		if s == nil || !c.Valid() || c.WallStats.Median <= 0 {
			continue
		}
		c.SpeedupWall, c.SeedScaled = s.WallStats.Median/c.WallStats.Median, s.Scaled()
		if s.KernelStats.Median > 0 && c.KernelStats.Median > 0 {
			c.SpeedupKernel = s.KernelStats.Median / c.KernelStats.Median
		}
	}
}

// InstructionsPerPair is the FP32 instructions the brute kernel spends a
// pair (3 FADD, 1 FMUL, 2 FFMA, 1 FMNMX), for the % of FP32 peak.
const InstructionsPerPair = 7

// BytesPerObs is the memory traffic the grid throughput counts an
// observation: its two float64 coordinates read and its answer (uint32
// index, float32 distance) written.
const BytesPerObs = 16 + 8
