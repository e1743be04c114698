package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/internal/ranks"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/formats"
	"github.com/geoknn/geoknn/simulator"
	"github.com/geoknn/geoknn/sphere"
	"github.com/geoknn/geoknn/stream"
)

const simulateUsage = `Usage: knn simulate [flags]

Moves the references along great circles and answers the nearest-reference
query at every step, on one engine kept open for the whole simulation. The
observations stay on the GPUs (a session): each step sends only the moved
references and the replaced observations, and the host prepares the next step
while the GPUs answer the current one.

Step 1 is the initial state (the query knn run asks with the same --obs,
--ref, --gen and --seed). Before each later step every reference moves --dt
seconds at its speed (uniform in [--min-speed, --speed] m/s, heading uniform,
both drawn from --seed) along its great circle, across the poles and the
antimeridian, and a fraction --replace of the observations is replaced by
fresh points of --gen. Everything is reproducible from --seed.

One line per step, on standard output: the simulated time (time_s); the step's wall time (step_s);
the time spent in the query (query_s: preparing the references and waiting
for the answers); the host's own work (update_s: moving, drawing and sending
replacements, mostly overlapped with the GPUs); the GPU kernels (kernel_ms);
the host preparation of the references and grid plan (prep_ms); the
observations replaced; and the observations kept whose nearest reference
changed since the step before (count and fraction of the kept ones; replaced
observations are counted apart); kernel_ms and prep_ms are "-" where the engine
has none (the CPU). Then, on standard error, a summary: median, min and max query
time, the median whole step, steps per second (not counting output), engine
and devices.

--out-dir DIR writes each step's answers to DIR/step-0001.csv, ... (header
obs_index,ref_index,distance_m, one row per observation slot, as knn run
--out), or with --out-format npz to DIR/step-0001.npz, ... (NumPy arrays
ref_index and distance_m, 12 bytes an observation: the form for large runs);
each file appears complete or not at all.

Examples:
  knn simulate --obs 2^24 --ref 2^16 --steps 100 --dt 60
  knn simulate --obs 2^20 --ref 2^10 --steps 10 --speed 250 --replace 0.05 --out-dir steps/
  knn simulate --obs cities.csv --ref 2^12 --steps 20 --dt 600 --engine cpu

Flags:
`

// configWithRefs loads the references (seed+1, as knn run) and makes the
// simulation's configuration for obs; cmd names the command in errors.
func (f *simFlags) configWithRefs(ctx context.Context, cmd string, obs source) (simulator.Config, source, error) {
	ref, err := f.loadRef(ctx, cmd)
	if err != nil {
		return simulator.Config{}, ref, err
	}
	cfg := f.config(obs, ref)
	return cfg, ref, cfg.Validate()
}

// loadRef loads the references (seed+1, as knn run); cmd names the
// command in errors.
func (f *simFlags) loadRef(ctx context.Context, cmd string) (source, error) {
	ref, err := loadSource(ctx, "--ref", f.ref, f.refGen, f.seed+1)
	if err != nil {
		return ref, fmt.Errorf("%s: %w", cmd, err)
	}
	if ref.len() == 0 {
		return ref, fmt.Errorf("%s: --ref %s: no reference points", cmd, f.ref)
	}
	return ref, nil
}

type simFlags struct {
	engineFlags
	obs, ref, gen, refGen string
	seed                  uint64
	steps                 int
	dt, speed, minSpeed   float64
	replace               float64
	outDir, outFormat     string
	validate              int
	quiet, mpi            bool
	engineOpts            geoknn.Options // from the flags, by check
}

// addSimulationFlags defines the flags knn simulate and knn plot --simulate
// share.
func addSimulationFlags(fs *flag.FlagSet, f *simFlags, steps int, dt float64) {
	fs.StringVar(&f.gen, "gen", "sphere", "generator for counts and for fresh observations: sphere, seed or clustered")
	fs.StringVar(&f.refGen, "ref-gen", "", "generator for a --ref count (default: --gen)")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed: observations, references (seed+1), motion and replacement")
	fs.IntVar(&f.steps, "steps", steps, "number of steps (queries); step 1 is the initial state")
	fs.Float64Var(&f.dt, "dt", dt, "time step in seconds")
	fs.Float64Var(&f.speed, "speed", 250, "maximum reference speed, m/s (speeds are uniform in [--min-speed, --speed])")
	fs.Float64Var(&f.minSpeed, "min-speed", 0, "minimum reference speed, m/s (equal to --speed for a fixed speed)")
	fs.Float64Var(&f.replace, "replace", 0, "fraction of observations replaced by fresh points before each step, in [0, 1]")
	f.engineFlags.register(fs)
}

// check validates the shared flags and fills engineOpts.
func (f *simFlags) check(cmd string) error {
	if f.steps < 1 {
		return fmt.Errorf("%s: --steps %d: want at least 1", cmd, f.steps)
	}
	if math.IsNaN(f.dt) || math.IsInf(f.dt, 0) || f.dt < 0 {
		return fmt.Errorf("%s: --dt %v: want a finite number of seconds >= 0", cmd, f.dt)
	}
	if !(f.speed >= 0) || math.IsInf(f.speed, 0) {
		return fmt.Errorf("%s: --speed %v: want a finite speed >= 0 m/s", cmd, f.speed)
	}
	if !(f.minSpeed >= 0 && f.minSpeed <= f.speed) {
		return fmt.Errorf("%s: --min-speed %v: want 0 <= --min-speed <= --speed (%v)", cmd, f.minSpeed, f.speed)
	}
	if !(f.replace >= 0 && f.replace <= 1) {
		return fmt.Errorf("%s: --replace %v: want a fraction in [0, 1]", cmd, f.replace)
	}
	if f.refGen == "" {
		f.refGen = f.gen
	}
	for _, g := range []struct{ flag, name string }{{"--gen", f.gen}, {"--ref-gen", f.refGen}} {
		if _, err := sphere.ByName(g.name); err != nil {
			return fmt.Errorf("%s: %s %q: unknown generator (want %s)", cmd, g.flag, g.name, strings.Join(sphere.Names(), ", "))
		}
	}
	opts, err := f.engineFlags.options()
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	f.engineOpts = opts
	return nil
}

// source is --obs or --ref of a simulation: a file (initial points) or a
// count of generated ones.
type source struct {
	count int
	init  geoknn.Points
	pts   pointSet // the file's points; empty for counts
	desc  string
}

func loadSource(ctx context.Context, flagName, arg, gen string, seed uint64) (source, error) {
	n, isFile, err := resolveArg(flagName, arg)
	if err != nil {
		return source{}, err
	}
	if !isFile {
		limit := maxObservations
		if flagName == "--ref" {
			limit = maxReferences
		}
		if err := checkCount(flagName, n, limit, 48); err != nil { // columns, answers, replacements
			return source{}, err
		}
		return source{count: n, desc: fmt.Sprintf("synthetic %s, seed %d", gen, seed)}, nil
	}
	ps, err := loadFile(ctx, arg, pointio.ReadOptions{})
	if err != nil {
		return source{}, err
	}
	return source{init: ps.cols, pts: ps, desc: arg}, nil
}

func (s source) len() int { return max(s.count, s.init.Len()) }

// config builds the simulation's configuration.
func (f *simFlags) config(obs, ref source) simulator.Config {
	return simulator.Config{
		Obs: obs.count, Ref: ref.count, ObsGen: f.gen, RefGen: f.refGen, Seed: f.seed,
		InitObs: obs.init, InitRef: ref.init,
		Steps: f.steps, Dt: f.dt, MinSpeed: f.minSpeed, MaxSpeed: f.speed, Replace: f.replace,
		Options: f.engineOpts,
	}
}

func cmdSimulate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f simFlags
	fs := f.simulateFlagSet(stderr)
	if helped, err := parseFlags(fs, simulateUsage, args, stdout, stderr); helped || err != nil {
		return err
	}
	if err := f.checkSimulate(); err != nil {
		return usageError{err}
	}
	digits := max(4, len(strconv.Itoa(f.steps)))
	if err := f.checkOutDir(fs, digits); err != nil {
		return err
	}
	if f.mpi {
		return simulateMPI(ctx, &f, digits, stdout, stderr)
	}
	obs, err := loadSource(ctx, "--obs", f.obs, f.gen, f.seed)
	if err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	cfg, ref, err := f.configWithRefs(ctx, "simulate", obs)
	if err != nil {
		return err
	}
	// Answers come back to the host only for the steps that use them; the
	// rest stay on the GPUs.
	cfg.Answers = func(n int) bool { return f.outDir != "" || (f.validate > 0 && n == f.steps) }
	out, err := newSimOutput(&f, stdout, stderr, digits)
	if err != nil {
		return err
	}
	if out.dir != nil {
		defer out.dir.Discard()
	}
	sum, err := simulator.Run(ctx, cfg, func(s simulator.Step) error { return out.step(ctx, s) })
	out.bar.clear()
	if err == nil && out.dir != nil {
		err = out.dir.Commit()
	}
	if sum.Steps > 0 || err == nil {
		out.printResults(sum, obs, ref, err == nil)
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("simulate: interrupted after %d steps; no step file written", sum.Steps)
		}
		return err
	}
	return nil
}

// simulateFlagSet defines knn simulate's flags over f.
func (f *simFlags) simulateFlagSet(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.obs, "obs", "2^20", "observations: a count such as 2^24, or a CSV/GeoJSON file of initial observations")
	fs.StringVar(&f.ref, "ref", "2^12", "references: a count such as 2^16, or a CSV/GeoJSON file of initial positions")
	addSimulationFlags(fs, f, 10, 60)
	fs.StringVar(&f.outDir, "out-dir", "", "write each step's answers to DIR/step-NNNN.csv (or .npz)")
	fs.StringVar(&f.outFormat, "out-format", "csv", "format of --out-dir files: "+formats.Names())
	fs.IntVar(&f.validate, "validate", 0, "check this many sampled answers of the last step against a float64 brute force")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress bar and no per-step lines: the summary only")
	fs.BoolVar(&f.quiet, "q", false, "short for --quiet")
	fs.BoolVar(&f.mpi, "mpi", false, "run as one rank of an MPI job (mpirun, srun): the observations split by rank, each held by its rank's engine (a GPU a rank where a node runs several), every reference moved alike on every rank; rank 0 prints the table (the slowest rank's times); every rank writes its rows of each step file at their offsets (Arrow: gathered to rank 0)")
	return fs
}

// checkSimulate validates the shared flags and knn simulate's own.
func (f *simFlags) checkSimulate() error {
	if err := f.check("simulate"); err != nil {
		return err
	}
	if f.validate < 0 {
		return fmt.Errorf("simulate: --validate %d: want >= 0", f.validate)
	}
	if _, err := formats.Named(f.outFormat); err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	if f.outDir != "" {
		if fi, err := os.Stat(f.outDir); err == nil && !fi.IsDir() {
			return fmt.Errorf("simulate: --out-dir %s: not a folder", f.outDir)
		}
	}
	return nil
}

// simOutput is what knn simulate makes of the steps: the files of
// --out-dir, the check of the last step, the lines on stdout and the
// progress bar.
type simOutput struct {
	f              *simFlags
	stdout, stderr io.Writer
	digits         int // of the step numbers in file names
	bar            *stepBar
	start          time.Time
	validated      string        // the last step's validation report, once checked
	written        int           // step files written whole
	dir            *ranks.Folder // where --out-dir's files go until the end
}

// newSimOutput starts a simulation's output: the step files' folder
// (--out-dir), and the table's heading.
func newSimOutput(f *simFlags, stdout, stderr io.Writer, digits int) (*simOutput, error) {
	o := &simOutput{f: f, stdout: stdout, stderr: stderr, digits: digits, bar: newStepBar(stderr, f.quiet)}
	if f.outDir != "" {
		var err error
		// The step files wait in a folder of their own, moved into
		// --out-dir only once every step is done: a run stopped by an
		// error or a signal leaves nothing it wrote.
		if o.dir, err = ranks.NewFolder(f.outDir, "simulate: --out-dir"); err != nil {
			return nil, err
		}
	}
	o.printHeader()
	o.start = time.Now()
	return o, nil
}

// printHeader prints the heading of the per-step lines.
func (o *simOutput) printHeader() {
	if !o.f.quiet {
		fmt.Fprintf(o.stdout, "%6s %10s %9s %9s %9s %9s %8s %10s %10s %8s\n", "step", "time_s", "step_s", "query_s", "update_s", "kernel_ms", "prep_ms", "replaced", "changed", "changed%")
	}
}

// step handles one simulated step; an error stops the simulation.
func (o *simOutput) step(ctx context.Context, s simulator.Step) error {
	if s.N == 1 && s.Result.Fallback != "" {
		o.bar.clear()
		fmt.Fprintf(o.stderr, "knn: no GPU (%s): running on the CPU\n", s.Result.Fallback)
	}
	if o.dir != nil {
		if err := writeStep(ctx, o.dir, o.f.outFormat, o.digits, s); err != nil {
			return err
		}
		o.written++
	}
	if o.f.validate > 0 && s.N == o.f.steps {
		if err := o.validate(ctx, s); err != nil {
			return err
		}
	}
	if !o.f.quiet {
		o.bar.clear()
		o.printStep(s)
	}
	o.bar.show(s.N, o.f.steps, o.start)
	return nil
}

// validate checks --validate sampled answers of step s, listing the
// failures on stderr.
func (o *simOutput) validate(ctx context.Context, s simulator.Step) error {
	rep, err := validateSample(ctx, pointSet{cols: s.Obs}, pointSet{cols: s.Ref}, s.Result, o.f.validate, o.f.seed)
	if err != nil {
		return err
	}
	o.validated = rep.String()
	if !rep.OK() {
		for _, fl := range rep.Failures {
			fmt.Fprintf(o.stderr, "  %s\n", fl)
		}
		return fmt.Errorf("simulate: step %d: validation failed: %s", s.N, rep)
	}
	return nil
}

// printStep prints step s's line; the changed counts are "-" at step 1,
// which has no step before it.
func (o *simOutput) printStep(s simulator.Step) {
	changed, frac := "-", "-"
	if s.N > 1 {
		changed, frac = strconv.Itoa(s.Changed), fmt.Sprintf("%.3f", 100*s.ChangedFraction)
	}
	// Kernel time is the GPU's: a CPU run has none to show, not 0.00.
	kernel, prep := "-", "-"
	if s.Stats.Engine == "gpu" {
		kernel = fmt.Sprintf("%.2f", ms(s.Stats.Kernel))
	}
	if s.Stats.Engine == "gpu" || s.Stats.Prepare > 0 {
		prep = fmt.Sprintf("%.2f", ms(s.Stats.Prepare))
	}
	fmt.Fprintf(o.stdout, "%6d %10g %9.4f %9.4f %9.4f %9s %8s %10d %10s %8s\n", s.N, s.Time,
		s.Wall.Seconds(), s.Query.Seconds(), s.Update.Seconds(), kernel, prep, s.Replaced, changed, frac)
}

// printResults prints the summary, the validation and the files written.
func (o *simOutput) printResults(sum simulator.Summary, obs, ref source, done bool) {
	f := o.f
	// The summary is a report, on stderr beside the progress; stdout
	// holds the per-step table alone, for tools that read it.
	printSummary(o.stderr, *f, sum, obs, ref)
	if o.validated != "" {
		fmt.Fprintf(o.stderr, "validate:     step %d: %s\n", f.steps, o.validated)
	}
	if f.outDir != "" && o.written > 0 && done {
		fmt.Fprintf(o.stderr, "wrote:        %d files, %s to %s\n", o.written,
			filepath.Join(f.outDir, fmt.Sprintf("step-%0*d.%s", o.digits, 1, f.outFormat)), fmt.Sprintf("step-%0*d.%s", o.digits, o.written, f.outFormat))
	}
}

// printSummary prints the simulation's summary lines.
func printSummary(w io.Writer, f simFlags, sum simulator.Summary, obs, ref source) {
	nObs, nRef := obs.len(), ref.len()
	fmt.Fprintf(w, "engine:       %s (%s), algorithm %s\n", sum.Engine, strings.Join(sum.Devices, ", "), f.engineOpts.Algorithm)
	fmt.Fprintf(w, "observations: %d (%s), %.4g%% replaced per step\n", nObs, obs.desc, 100*f.replace)
	fmt.Fprintf(w, "references:   %d (%s), speed %g-%g m/s, dt %g s\n", nRef, ref.desc, f.minSpeed, f.speed, f.dt)
	fmt.Fprintf(w, "steps:        %d; query median %s (min %s, max %s), %.3g pairs/s; whole step median %s; %.3f steps/s\n",
		sum.Steps, stepTime(sum.Median), stepTime(sum.Min), stepTime(sum.Max),
		float64(nObs)*float64(nRef)/max(sum.Median.Seconds(), 1e-9), stepTime(sum.StepMedian), sum.StepsPerSecond)
	ph := sum.PhaseMedians
	fmt.Fprintf(w, "step phases:  median replace %.2f ms, start %.2f ms, host work during the query %.2f ms, wait %.2f ms\n",
		ms(ph.Replace), ms(ph.Start), ms(ph.Host), ms(ph.Wait))
}

// stepTime is a step's duration for the summary: milliseconds to two
// decimals below a second (a resident query takes one or two), seconds
// above.
func stepTime(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%.2f ms", ms(d))
	}
	return fmt.Sprintf("%.3f s", d.Seconds())
}

// writeStep writes one step's answers to step-NNNN.FORMAT (csv, npz,
// parquet or arrow) in dir.
func writeStep(ctx context.Context, dir *ranks.Folder, format string, digits int, s simulator.Step) error {
	out, err := formats.Named(format) // checked before the work
	if err == nil {
		path := dir.Path(stepName(s.N, digits, format))
		err = out.WriteWhole(ctx, path, nil, stream.KindNearest, 0, s.Result.Answers())
	}
	if err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	return nil
}

// checkOutDir checks --out-dir before any work: an existing folder that
// holds none of the files the run writes, or a new one in an existing
// folder.
func (f *simFlags) checkOutDir(fs *flag.FlagSet, digits int) error {
	if err := checkOutputs(fs, []string{"out-dir"}, nil, nil); err != nil {
		return err
	}
	dir := f.outDir
	if dir == "" {
		return nil
	}
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("simulate: --out-dir %s is not a folder", dir)
		}
		return checkStepDir(dir, f.outFormat, f.steps, digits, f.obs, f.ref)
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if fi, err := os.Stat(parent); err != nil || !fi.IsDir() {
		return fmt.Errorf("simulate: --out-dir %s: no folder %s to make it in", dir, parent)
	}
	return nil
}
