package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/geoknn/geoknn/internal/count"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/internal/bench"
	"github.com/geoknn/geoknn/pointio"
)

const benchUsage = `Usage: knn bench [flags]

Sweeps problem sizes, algorithms, engines, GPU counts and generators, and
prints a Markdown table: per case, warm-up runs (not counted), then --repeat
timed runs on one open Searcher (one per engine, GPU count and algorithm,
reused across sizes), then a check of --validate sampled answers of the last
run against the float64 haversine brute force.

Sizes (--obs, --ref): a comma-separated list of counts (2^20, 1048576, 1e6) and
ranges FROM:TO[:STEP], STEP xK (multiply, the default x2) or +K (add). A range
holds FROM and each step up to TO.
  2^20:2^27        2^20, 2^21, ..., 2^27
  2^20:2^27:x4     2^20, 2^22, 2^24, 2^26
  2^10,2^12,5e4    a plain list
Every --obs size runs against every --ref size. Give --obs and --ref several
times to sweep a union of such cross products, paired in order (a flag given
once pairs with all of the other's):
  --obs 2^20:2^27 --ref 2^16 --obs 2^24 --ref 2^10:2^18
GPU counts (--gpus): counts, ranges (step +1 by default) and all: 1,2  all
1:all  1:8:x2. Counts above the GPUs present are skipped with a note.

--gen cities queries --obs sphere points against the cities file (--cities);
--ref does not apply to it. Observations use --seed, references --seed+1;
a case of n points uses the first n of the largest set generated.

Seed-algorithm cases above --seed-max-pairs pairs are timed on the first
--seed-max-pairs/ref observations and their times scaled by obs/measured
(marked ~), or skipped with --seed-scale=false.

Without a GPU, gpu cases are skipped with a note. The exit status is 1 when a
case FAILed validation or its query failed (seed answers off by 1 to 10 m are
"approx", not a failure). Output: the table and its legend on stdout;
--json FILE every sample and the environment; --plot FILE.png time against
pairs (and speed-up against GPU count when several were swept).
--from-json FILE runs nothing and re-renders a saved report (table, --plot).

Examples:
  knn bench --quick
  knn bench --engine gpu --gpus 1 --algo seed,brute,grid --obs 2^20:2^27 --ref 2^16 \
      --obs 2^24 --ref 2^10:2^18 --json h200.json --plot h200.png
  knn bench --engine gpu --gpus 1,2 --obs 2^27 --ref 2^16 --plot scaling.png

Flags:
`

// Defaults of knn bench, and those --quick puts in place of every flag not
// given; sizes are the --obs and --ref flags, paired in order.
var (
	benchDefaults = map[string]string{
		"engine": "auto", "algo": "all", "gen": "sphere", "gpus": "all", "repeat": "3", "warmup": "1",
	}
	benchDefaultObs = multiFlag{"2^16:2^20:x4"}
	benchDefaultRef = multiFlag{"2^10:2^14:x4"}

	benchQuick = map[string]string{
		"engine": "cpu,gpu", "algo": "all", "gen": "sphere", "gpus": "all", "repeat": "3", "warmup": "1",
	}
	benchQuickObs = multiFlag{"2^12:2^18", "2^16"}
	benchQuickRef = multiFlag{"2^12", "2^8:2^14"}
)

// multiFlag is a flag that may be given several times.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

type benchFlags struct {
	obs, ref                            multiFlag
	engines, algos, gpus, gens, cities  string
	memory, seedMax, jsonPath, plotPath string
	fromJSON                            string
	seed                                uint64
	warmup, repeat, validate, batch     int
	quick, quiet, seedScale             bool
}

func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f benchFlags
	fs := f.flagSet(stderr)
	if helped, err := parseFlags(fs, benchUsage, args, stdout, stderr); helped || err != nil {
		return err
	}
	if err := checkOutputs(fs, []string{"json", "plot"}, []string{f.jsonPath, f.plotPath}, []string{f.cities, f.fromJSON}); err != nil {
		return err
	}
	if f.fromJSON != "" {
		return benchFromJSON(ctx, f, stdout, stderr)
	}
	if err := f.applyDefaults(fs); err != nil {
		return usageError{err}
	}
	cfg, err := benchConfig(f)
	if err != nil {
		return usageError{err}
	}
	cfg.CommandLine = append([]string{"knn", "bench"}, args...)
	cfg.Log = stderr
	if !f.quiet {
		cfg.Progress = stderr
	}
	rep, runErr := bench.Run(ctx, cfg)
	if rep == nil {
		return runErr
	}
	if err := ctx.Err(); err != nil {
		return err // stopped: a partial sweep is written nowhere
	}
	if err := writeReport(ctx, rep, f.jsonPath, f.plotPath, stdout, stderr); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	if n := rep.Failed(); n > 0 {
		return fmt.Errorf("bench: %d case(s) failed (see the verdict column)", n)
	}
	return nil
}

// flagSet defines knn bench's flags over f.
func (f *benchFlags) flagSet(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Var(&f.obs, "obs", "observation sizes, e.g. 2^20:2^27 or 2^20,2^24 (repeatable; default "+benchDefaultObs.String()+")")
	fs.Var(&f.ref, "ref", "reference sizes, e.g. 2^10:2^18 (repeatable; default "+benchDefaultRef.String()+")")
	fs.StringVar(&f.algos, "algo", benchDefaults["algo"], "algorithms: seed,brute,grid or all (every one the engine knows)")
	fs.StringVar(&f.engines, "engine", benchDefaults["engine"], "engines: cpu,gpu; auto = gpu if present, else cpu")
	fs.StringVar(&f.gpus, "gpus", benchDefaults["gpus"], "GPU counts for gpu cases: 1,2 or 1:all or all")
	fs.StringVar(&f.gens, "gen", benchDefaults["gen"], "generators: seed,sphere,clustered,cities")
	fs.StringVar(&f.cities, "cities", defaultCitiesPath(), "the cities file, references of --gen cities")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed of the observations (references use seed+1) and of the validation sample")
	fs.IntVar(&f.warmup, "warmup", 1, "untimed runs per case")
	fs.IntVar(&f.repeat, "repeat", 3, "timed runs per case")
	fs.IntVar(&f.validate, "validate", 1024, "answers per case checked against the float64 brute force (0 = none)")
	fs.StringVar(&f.seedMax, "seed-max-pairs", "2^40", "largest seed-algorithm case timed in full (pairs)")
	fs.BoolVar(&f.seedScale, "seed-scale", true, "above --seed-max-pairs, time seed on fewer observations and scale (false: skip)")
	fs.IntVar(&f.batch, "batch-size", 0, "observations per job (0 = automatic)")
	fs.StringVar(&f.memory, "memory", "device", "GPU memory: device or managed")
	fs.BoolVar(&f.quick, "quick", false, "a smoke sweep of well under a minute: --obs "+benchQuickObs[0]+" --ref "+benchQuickRef[0]+
		" --obs "+benchQuickObs[1]+" --ref "+benchQuickRef[1]+" --engine "+benchQuick["engine"]+" (flags given still apply)")
	fs.StringVar(&f.jsonPath, "json", "", "write every sample, the devices and the environment to this JSON file")
	fs.StringVar(&f.plotPath, "plot", "", "draw time vs pairs (and speed-up vs GPUs) to this PNG file")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress bar")
	fs.BoolVar(&f.quiet, "q", false, "short for --quiet")
	fs.StringVar(&f.fromJSON, "from-json", "", "run nothing: print the table of this earlier --json report (and --plot it)")
	return fs
}

// applyDefaults puts --quick's values in place of the flags not given,
// and the default sizes in place of missing --obs and --ref.
func (f *benchFlags) applyDefaults(fs *flag.FlagSet) error {
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	defObs, defRef := benchDefaultObs, benchDefaultRef
	if f.quick {
		defObs, defRef = benchQuickObs, benchQuickRef
		for name, v := range benchQuick {
			if !given[name] {
				if err := fs.Set(name, v); err != nil {
					return err
				}
			}
		}
	}
	if len(f.obs) == 0 {
		f.obs = defObs
	}
	if len(f.ref) == 0 {
		f.ref = defRef
	}
	return nil
}

// benchConfig checks the flags and turns them into a sweep.
func benchConfig(f benchFlags) (bench.Config, error) {
	cfg := bench.Config{GPUs: f.gpus, CitiesPath: f.cities, Seed: f.seed, Warmup: f.warmup, Repeat: f.repeat,
		Validate: f.validate, SeedScale: f.seedScale, BatchSize: f.batch}
	var err error
	if cfg.Shapes, err = benchShapes(f.obs, f.ref); err != nil {
		return cfg, err
	}
	if cfg.Engines, err = bench.ParseEngines(f.engines); err != nil {
		return cfg, fmt.Errorf("bench: --engine: %w", err)
	}
	if cfg.Algorithms, err = bench.ParseAlgorithms(f.algos); err != nil {
		return cfg, fmt.Errorf("bench: %w", err)
	}
	if cfg.Generators, err = bench.ParseGenerators(f.gens); err != nil {
		return cfg, fmt.Errorf("bench: %w", err)
	}
	if _, err := bench.ParseGPUs(f.gpus, 1); err != nil {
		return cfg, fmt.Errorf("bench: --gpus %s: %w", f.gpus, err)
	}
	if cfg.Memory, err = geoknn.ParseMemoryMode(f.memory); err != nil {
		return cfg, fmt.Errorf("bench: --memory: %w", err)
	}
	n, err := count.Parse(f.seedMax)
	if err != nil || n < 1 {
		return cfg, fmt.Errorf("bench: --seed-max-pairs %s: want a positive count such as 2^40", f.seedMax)
	}
	cfg.SeedMaxPairs = float64(n)
	if f.repeat < 1 || f.warmup < 0 || f.validate < 0 || f.batch < 0 {
		return cfg, errors.New("bench: --repeat must be >= 1; --warmup, --validate and --batch-size >= 0")
	}
	return cfg, nil
}

// benchShapes pairs the --obs and --ref flags in order (one given once
// pairs with all of the other's) and parses their sizes.
func benchShapes(obsFlags, refFlags multiFlag) ([]bench.Shape, error) {
	if len(obsFlags) != len(refFlags) && len(obsFlags) != 1 && len(refFlags) != 1 {
		return nil, fmt.Errorf("bench: %d --obs and %d --ref: give them the same number of times, or one of them once", len(obsFlags), len(refFlags))
	}
	var shapes []bench.Shape
	for i := range max(len(obsFlags), len(refFlags)) {
		o, r := obsFlags[min(i, len(obsFlags)-1)], refFlags[min(i, len(refFlags)-1)]
		obs, err := bench.ParseSizes(o)
		if err != nil {
			return nil, fmt.Errorf("bench: --obs %s: %w", o, err)
		}
		ref, err := bench.ParseSizes(r)
		if err != nil {
			return nil, fmt.Errorf("bench: --ref %s: %w", r, err)
		}
		shapes = append(shapes, bench.Shape{Obs: obs, Ref: ref})
	}
	return shapes, nil
}

// defaultCitiesPath is ../shared/data/cities.csv from the repository root,
// the nearest folder up from the working directory whose go.mod is this
// module's; from the working directory when there is none.
func defaultCitiesPath() string {
	rel := filepath.Join("..", "shared", "data", "cities.csv")
	dir, err := os.Getwd()
	if err != nil {
		return rel
	}
	for d := dir; ; d = filepath.Dir(d) {
		if isModuleRoot(d) {
			return filepath.Join(d, rel)
		}
		if filepath.Dir(d) == d {
			return rel
		}
	}
}

func isModuleRoot(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); strings.HasPrefix(line, "module ") {
			return strings.Trim(strings.TrimSpace(strings.TrimPrefix(line, "module")), `"`) == "github.com/geoknn/geoknn"
		}
	}
	return false
}

// benchFromJSON re-renders a saved report: its table on stdout and, with
// --plot, its plot.
func benchFromJSON(ctx context.Context, f benchFlags, stdout, stderr io.Writer) error {
	rep, err := bench.ReadJSON(f.fromJSON)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return writeReport(ctx, rep, "", f.plotPath, stdout, stderr)
}

// writeReport prints rep's table and writes its JSON and plot where asked,
// both or (on an error or a signal) neither.
func writeReport(ctx context.Context, rep *bench.Report, jsonPath, plotPath string, stdout, stderr io.Writer) error {
	if err := rep.WriteMarkdown(stdout); err != nil {
		return err
	}
	var outs []pointio.Output
	if jsonPath != "" {
		outs = append(outs, pointio.Output{Path: jsonPath, Write: func(w *bufio.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(rep)
		}})
	}
	if plotPath != "" {
		outs = append(outs, pointio.Output{Path: plotPath, Write: func(w *bufio.Writer) error { return rep.WritePNG(w) }})
	}
	if err := pointio.WriteAll(ctx, stdout, outs); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	for _, o := range outs {
		fmt.Fprintf(stderr, "bench: wrote %s\n", o.Path)
	}
	return nil
}
