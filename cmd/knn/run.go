package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/paulmach/orb"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/formats"
	"github.com/geoknn/geoknn/sphere"
	"github.com/geoknn/geoknn/stream"
	"github.com/geoknn/geoknn/validate"
)

const runUsage = `Usage: knn run --obs COUNT|FILE --ref COUNT|FILE [flags]

Finds, for every observation, the nearest reference by great-circle distance
(or the --k nearest, or those --within-m metres), exactly (within 1 m of the
float64 haversine answer; ties to the lowest index).

--obs and --ref take a file or a count of synthetic points:
  file   CSV with a header naming the latitude and longitude columns in degrees
         (lat|latitude, lon|lng|long|longitude, or --lat-col/--lon-col; any
         case and order; comma, semicolon, tab or bar; .csv.gz too), GeoJSON
         (FeatureCollection, Feature, Point, MultiPoint), Parquet/GeoParquet,
         Arrow IPC, NumPy .npy (N, 2) or .npz; - is standard input
  count  2^27, 134217728 or 1e6: points drawn by --gen with --seed (the
         references with seed+1)

--out FILE.csv writes obs_index,ref_index,distance_m, one row per observation
in input order; .npz the same as NumPy arrays ref_index (int32; -1 where a
k-nearest answer is missing) and distance_m (float64); .parquet and .arrow the CSV's columns; --obs-id and
--ref-id add identifier columns. The output appears only when the whole run
succeeded. Without --out, a file's answers go to standard output as CSV when
that is a pipe or a file; on a terminal, and for counts, they are not written.

A file given to --obs is read, answered and written a chunk at a time
(--chunk-rows), while later chunks are read and queried: memory does not grow
with the file. GeoJSON, .npz and Fortran-order .npy are read whole first.

Examples:
  knn run --obs 2^20 --ref 2^12
  knn run --obs cities.csv --ref airports.csv --out nearest.csv --validate 1000
  knn run --obs trips.parquet --lat-col pickup_latitude --lon-col pickup_longitude \
          --ref stations.csv --ref-id name --k 3 --out nearest3.parquet
  knn run --obs 2^27 --ref 2^16 --engine gpu --validate 65536
  knn run --obs 2^22 --ref 2^16 --algo seed     (the float32 baseline, for comparison)

Flags:
`

// runFlags are knn run's flags, grouped by what they decide.
type runFlags struct {
	engineFlags
	columnFlags
	queryFlags
	mpiFlags
	obs, ref, gen              string
	seed                       uint64
	out, outFormat, trace      string
	cpuProfile                 string
	validate, repeat, gridSide int
	chunkRows                  int
	quiet, verbose, hostPoints bool
	barOut                     io.Writer // the progress bar's terminal: standard error
	// q is the query the flags ask (queryFlags.query), set once they
	// are checked (options): every path switches on its kind.
	q geoknn.Query
}

// columnFlags say where the points and their ids are in the files.
type columnFlags struct {
	latCol, lonCol string
	radians        bool
	obsID, refID   string
}

// queryFlags choose the query kind: nearest (the default), k nearest
// within a distance, or within a radius.
type queryFlags struct {
	k                 int
	withinM, maxM     float64
	list, excludeSelf bool
	keepUnmatched     bool
}

// mpiFlags make a run one rank of an MPI job.
type mpiFlags struct {
	mpi, outPerRank bool
	gpusPerRank     int
}

// query is the query the flags ask: --k 1 alone is the nearest (K 0),
// which a distance limit or --exclude-self makes a k-nearest query of
// one; --within-m a radius query (the checks refuse --k and --max-m
// with it).
func (f *queryFlags) query() geoknn.Query {
	q := geoknn.Query{MaxMetres: f.maxM, RadiusMetres: f.withinM, List: f.list, ExcludeSelf: f.excludeSelf}
	if f.k != 1 {
		q.K = f.k
	}
	return q
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f runFlags
	fs := f.flagSet(stderr)
	if helped, err := parseFlags(fs, runUsage, args, stdout, stderr); helped || err != nil {
		return err
	}
	opts, err := f.options()
	if err != nil {
		return usageError{err}
	}
	if err := checkRadiusGiven(fs, f.withinM); err != nil {
		return err
	}
	f.defaultOut(fs, stdout)
	if err := f.checkOutputs(fs); err != nil {
		return err
	}
	if f.mpi {
		return runMPI(ctx, f, opts, stdout, stderr)
	}
	if err := f.checkCountsMemory(); err != nil {
		return err
	}
	stop, err := startCPUProfile(f.cpuProfile, stderr)
	if err != nil {
		return err
	}
	f.barOut = stderr
	if f.verbose {
		err = stop(ctx, runLocal(ctx, f, opts, stdout, stderr))
	} else {
		var sum runSummary
		if err = stop(ctx, runLocal(ctx, f, opts, stdout, &sum)); err != nil {
			sum.flush(stderr)
			return err
		}
		if !f.quiet {
			sum.print(stderr, f)
		}
	}
	if err == nil && f.out == "" && !f.quiet {
		fmt.Fprintln(stderr, "answers:      not written: --out FILE writes them (.csv, .parquet, .arrow, .npz), --out - to standard output")
	}
	return err
}

// defaultOut sends the answers of a file's observations to standard
// output when no --out is given and standard output is a pipe or a file,
// as a filter does (knn run --obs a.csv --ref b.csv | head). Synthetic
// observations are benchmarks, and a terminal would scroll millions of
// rows: there the answers are only counted, and the summary says so.
func (f *runFlags) defaultOut(fs *flag.FlagSet, stdout io.Writer) {
	given := false
	fs.Visit(func(fl *flag.Flag) { given = given || fl.Name == "out" || fl.Name == "o" })
	if given || f.mpi || isCount(f.obs) || isTerminal(stdout) {
		return
	}
	f.out = "-"
}

// isTerminal reports whether w is a terminal (or another character
// device, such as /dev/null, that nobody reads answers from).
func isTerminal(w io.Writer) bool {
	file, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := file.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// runLocal is knn run in this process: streamed, or read whole and
// answered in memory.
func runLocal(ctx context.Context, f runFlags, opts geoknn.Options, stdout, stderr io.Writer) error {
	t0 := time.Now()
	if f.trace != "" || f.verbose {
		opts.Trace = geoknn.NewTrace()
	}
	if f.streams() {
		return runStream(ctx, f, opts, stdout, stderr)
	}
	bar := newProgressBar(f.barWriter(stderr), f.quiet)
	opts.Progress = bar.update
	in, err := openAndLoad(ctx, f, opts, stderr)
	if err != nil {
		return err
	}
	defer in.s.Close()
	if err := f.checkLoaded(in); err != nil {
		return err
	}
	if in.s.Fallback() != "" {
		fmt.Fprintf(stderr, "knn: no GPU (%s): running on the CPU\n", in.s.Fallback())
	}
	if kind, _ := f.q.Kind(); kind != stream.KindNearest {
		fmt.Fprintf(stderr, "observations: %d (%s)\nreferences:   %d (%s)\n", in.obs.cols.Len(), in.obs.desc, in.ref.cols.Len(), in.ref.desc)
		if err := runNeighbours(ctx, f, in, stdout, stderr); err != nil {
			return err
		}
		in.s.CloseAtExit() // as runNearest does
		fmt.Fprintf(stderr, "total:        %.3f s\n", time.Since(t0).Seconds())
		return reportTrace(ctx, stderr, opts.Trace, f)
	}
	if err := runNearest(ctx, f, in, opts, bar, stdout, stderr); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "total:        %.3f s\n", time.Since(t0).Seconds())
	return reportTrace(ctx, stderr, opts.Trace, f)
}

// checkLoaded checks what needs the points' counts, before the query:
// --k against the references, and the plan's memory.
func (f *runFlags) checkLoaded(in *runInputs) error {
	if err := f.checkRefs(in.ref.cols.Len()); err != nil {
		return err
	}
	return f.checkPlanMemoryHeld(in.obs.cols.Len(), in.ref.cols.Len(), in.obs.pts != nil || !isCount(f.obs), in.answerBytes())
}

// answerBytes is the memory of the answers made while the engine started.
func (in *runInputs) answerBytes() uint64 {
	var n int
	if in.res != nil {
		n += 4*len(in.res.Index) + 4*len(in.res.DistanceRad)
	}
	if in.kres != nil {
		n += 4*len(in.kres.Index) + 4*len(in.kres.DistanceRad)
	}
	return uint64(n)
}

// runNearest is knn run's nearest query: --repeat queries, their report,
// the validation and --out, then the engine closed.
func runNearest(ctx context.Context, f runFlags, in *runInputs, opts geoknn.Options, bar *progressBar, stdout, stderr io.Writer) error {
	if f.hostPoints {
		unpin, err := in.pin(opts.Trace)
		if err != nil {
			return err
		}
		defer unpin()
	}
	nearest := func(ctx context.Context, res *geoknn.Result) error {
		return in.s.NearestInto(ctx, in.obs.cols, in.ref.cols, res)
	}
	closeAtExit := in.s.CloseAtExit
	if f.repeat > 1 {
		// Repeated queries of one reference set, as a program asks them:
		// through an Index, whose references are prepared and whose plan is
		// chosen once, not again for every query (tens of milliseconds of
		// host work before a 2^30 query's first job). It takes the
		// searcher over, and closes its engine.
		x, err := in.s.NewIndex(in.ref.cols)
		if err != nil {
			return err
		}
		nearest = func(ctx context.Context, res *geoknn.Result) error { return x.NearestInto(ctx, in.obs.cols, res) }
		closeAtExit = x.CloseAtExit
	}
	res, queries, err := in.query(ctx, f.repeat, bar, nearest)
	if err != nil {
		return err
	}
	in.report(stderr, res, opts.Algorithm, queries)
	if err := answeredOf(ctx, f, stdout, stderr, &geoknn.Answer{Kind: stream.KindNearest, Nearest: res}).finish(in, f); err != nil {
		return err
	}
	end := opts.Trace.Begin("host", "close engine")
	defer end()
	return closeAtExit() // the process exits next: its exit frees the GPUs at once
}

// pin page-locks the points and the answers once, so that every query
// copies them straight from their columns; unpin undoes both.
func (in *runInputs) pin(tr *geoknn.Trace) (unpin func(), err error) {
	end := tr.Begin("host", "pin points")
	defer end()
	unpinObs, err := in.s.Pin(in.obs.cols)
	if err != nil {
		return nil, err
	}
	unpinRes, err := in.s.PinResult(in.res)
	if err != nil {
		unpinObs()
		return nil, err
	}
	return func() { unpinRes(); unpinObs() }, nil
}

// output is --out's format (package formats, the one registry of output
// formats): --out-format's, else its extension's.
func (f *runFlags) output() (*formats.Format, error) {
	if f.outFormat == "" {
		return formats.ForAnswers(f.out)
	}
	out, err := formats.Named(f.outFormat)
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	return out, nil
}

// format is the name of --out's format (output), which the MPI ranks
// compare.
func (f *runFlags) format() (string, error) {
	out, err := f.output()
	if err != nil {
		return "", err
	}
	return out.Name, nil
}

// checkOutputs checks --out and --trace before any work: each a place
// that can take it, neither an input nor the other.
func (f *runFlags) checkOutputs(fs *flag.FlagSet) error {
	if f.obs == "-" && f.ref == "-" {
		return usagef("run: --obs - and --ref -: standard input holds one of them")
	}
	if f.trace == "-" {
		return usagef("run: --trace -: the trace goes to a file (standard output is --out -'s)")
	}
	if f.trace != "" && f.trace == f.out {
		return usagef("run: --trace and --out name the same file %s", f.out)
	}
	if f.cpuProfile == "-" {
		return usagef("run: --cpu-profile -: the profile goes to a file (standard output is --out -'s)")
	}
	if f.cpuProfile != "" && f.mpi {
		return usagef("run: --cpu-profile profiles one process, not the ranks of --mpi")
	}
	if f.cpuProfile != "" && (f.cpuProfile == f.out || f.cpuProfile == f.trace) {
		return usagef("run: --cpu-profile names the file of --out or --trace, %s", f.cpuProfile)
	}
	if err := checkOutputs(fs, []string{"out", "o", "trace", "cpu-profile"}, []string{f.out, f.trace, f.cpuProfile}, []string{f.obs, f.ref}); err != nil {
		return err
	}
	if f.out == "" {
		return nil
	}
	out, err := f.output()
	if err == nil {
		err = out.CheckRows(f.obsID != "" || f.refID != "")
	}
	if err != nil {
		return usageError{err}
	}
	// A missing reference is a CSV row "i,-1,"; the columnar formats and
	// the id columns have no such row yet, and MPI ranks write fixed
	// offsets.
	if f.keepUnmatched && (!out.Unmatched || f.obsID != "" || f.refID != "" || f.mpi) {
		return usagef("run: --keep-unmatched writes CSV answers without --obs-id, --ref-id or --mpi")
	}
	return nil
}

// reportTrace prints the trace's stage totals (-v) and writes it to
// --trace.
func reportTrace(ctx context.Context, w io.Writer, tr *geoknn.Trace, f runFlags) error {
	if f.verbose {
		fmt.Fprintln(w, "stages (summed over tracks, which overlap):")
		for _, s := range tr.Stages() {
			fmt.Fprintf(w, "  %-20s %9.1f ms  (%d)\n", s.Name, ms(s.Total), s.Count)
		}
	}
	if f.trace == "" {
		return nil
	}
	err := pointio.Write(ctx, f.trace, nil, func(b *bufio.Writer) error { return tr.WriteJSON(b) })
	if err != nil {
		return fmt.Errorf("writing the trace %s: %w", f.trace, err)
	}
	fmt.Fprintf(w, "wrote trace %s (open it in ui.perfetto.dev)\n", f.trace)
	return nil
}

// flagSet defines knn run's flags over f.
func (f *runFlags) flagSet(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.obs, "obs", "", "observations: a CSV/GeoJSON file or a count such as 2^27 (required)")
	fs.StringVar(&f.ref, "ref", "", "references: a CSV/GeoJSON file or a count such as 2^16 (required)")
	fs.StringVar(&f.gen, "gen", "sphere", "generator for counts: sphere (uniform on the sphere), seed (uniform in lat/lon degrees, crowding towards the poles), clustered")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed for generated points")
	fs.StringVar(&f.out, "out", "", "write answers to this file: .csv (obs_index,ref_index,distance_m), .npz (NumPy: ref_index, distance_m), .parquet or .arrow (the CSV's columns); - for CSV on stdout")
	fs.StringVar(&f.out, "o", "", "short for --out")
	f.engineFlags.register(fs)
	fs.IntVar(&f.gridSide, "grid-side", 0, "grid algorithm: cells per axis (0 = chosen from a sample of the query; capped at 16 sphere cells a reference)")
	fs.IntVar(&f.validate, "validate", 0, "check this many sampled answers against a float64 haversine brute force")
	fs.IntVar(&f.chunkRows, "chunk-rows", 0, "observations read, queried and written at a time when --obs is a file, the first three chunks of Parquet, .npy and CSV an eighth, a quarter and a half of it (0: 2^20 answers' worth on the CPU, 2^23 on GPUs, so 2^20/k points with --k; a Parquet row group at least)")
	fs.IntVar(&f.repeat, "repeat", 1, "run the query this many times on the open engine and report each time")
	fs.IntVar(&f.k, "k", 1, "the k nearest references of every observation (CSV obs_index,rank,ref_index,distance_m; npz arrays of shape (N, k))")
	fs.Float64Var(&f.withinM, "within-m", 0, "count the references within this many metres of every observation (CSV obs_index,count)")
	fs.BoolVar(&f.list, "list", false, "with --within-m: list those references (CSV obs_index,ref_index,distance_m; npz in CSR form)")
	fs.BoolVar(&f.keepUnmatched, "keep-unmatched", false, "with --within-m --list: a row obs_index,-1, for every observation with no reference in range (CSV)")
	fs.Float64Var(&f.maxM, "max-m", 0, "with --k: no reference farther than this many metres (0: no limit)")
	fs.BoolVar(&f.excludeSelf, "exclude-self", false, "observations and references are one set: skip the reference with the observation's own index")
	fs.BoolVar(&f.quiet, "quiet", false, "print nothing but errors: no progress bar, no summary (with --mpi: no progress bar)")
	fs.BoolVar(&f.quiet, "q", false, "short for --quiet")
	fs.StringVar(&f.latCol, "lat-col", "", "the latitude column's name in files that have it (e.g. pickup_latitude); others: lat or latitude")
	fs.StringVar(&f.lonCol, "lon-col", "", "the longitude column's name in files that have it; others: lon, lng, long or longitude")
	fs.BoolVar(&f.radians, "radians", false, "NumPy inputs hold radians, not degrees")
	fs.StringVar(&f.outFormat, "out-format", "", formats.Names()+": the --out format when its extension does not say (--out -)")
	fs.StringVar(&f.obsID, "obs-id", "", "carry this column of the --obs file (CSV, Parquet, Arrow) into --out as obs_id")
	fs.StringVar(&f.refID, "ref-id", "", "carry this column of the --ref file into --out as ref_id")
	fs.BoolVar(&f.hostPoints, "host-points", false, "counts: generate the observations into host memory, as a loaded file is, and page-lock them and the answers (to time repeated queries on host points)")
	fs.BoolVar(&f.verbose, "v", false, "print the engine's report instead of the summary: algorithm, index, busy times, GPU kernels, and the time of every stage (host and GPU), summed")
	fs.StringVar(&f.trace, "trace", "", "write a Chrome/Perfetto trace (JSON) of every stage, one track a GPU stream, to this file")
	fs.StringVar(&f.cpuProfile, "cpu-profile", "", "write the Go CPU profile of the run (go tool pprof) to this file, for reporting a slow run")
	fs.BoolVar(&f.mpi, "mpi", false, "run as one rank of an MPI job (mpirun --bind-to none, srun): rank 0 loads and broadcasts the references, the observations are split by rank, and every rank writes its rows into --out (.csv, .npz, .parquet) at their offsets, which needs a filesystem all ranks see (one host, a cluster's shared filesystem; else --out-per-rank); Arrow and npz with ids gather the answers to rank 0 (as root, Open MPI's mpirun needs --allow-run-as-root)")
	fs.BoolVar(&f.outPerRank, "out-per-rank", false, "with --mpi: every rank writes its own answers to --out with .rankN before the extension (obs_index as in the whole set), on its own disk: for ranks that share no filesystem")
	fs.IntVar(&f.gpusPerRank, "gpus-per-rank", 0, "with --mpi: GPUs each rank uses, from its node-local rank on (0: one a rank when a node runs several ranks, else all)")
	return fs
}

// sameFile reports whether two input names are one file: the same name,
// or two names (./a.csv, a link) of one file.
func sameFile(a, b string) bool {
	if a == b {
		return true
	}
	ai, err1 := os.Stat(a)
	bi, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(ai, bi)
}

// checkRadiusGiven refuses --within-m 0: the commands read a radius of 0
// as no radius query at all, and would answer the nearest table instead of
// the counts asked for.
func checkRadiusGiven(fs *flag.FlagSet, withinM float64) error {
	given := false
	fs.Visit(func(fl *flag.Flag) { given = given || fl.Name == "within-m" })
	if given && withinM == 0 {
		return usagef("%s: --within-m 0: want a radius > 0 metres", fs.Name())
	}
	return nil
}

// options checks the parsed flags and turns them into the searcher's
// options (without Progress).
func (f *runFlags) options() (geoknn.Options, error) {
	if f.obs == "" || f.ref == "" {
		return geoknn.Options{}, errors.New("run: --obs and --ref are required (see 'knn help run')")
	}
	if f.excludeSelf && (!sameFile(f.obs, f.ref) || filepath.Base(f.obs) == f.obs && isCount(f.obs)) {
		return geoknn.Options{}, errors.New("run: --exclude-self needs --obs and --ref to name the same file")
	}
	for _, d := range []struct {
		flag string
		v    float64
	}{{"--within-m", f.withinM}, {"--max-m", f.maxM}} {
		if math.IsNaN(d.v) || math.IsInf(d.v, 0) || d.v < 0 {
			return geoknn.Options{}, fmt.Errorf("run: %s %v: want a finite distance >= 0 metres", d.flag, d.v)
		}
	}
	// One message a mistake, naming the flag and the value given.
	switch {
	case f.k < 1:
		return geoknn.Options{}, fmt.Errorf("run: --k %d: want 1 or more nearest references", f.k)
	case f.list && f.withinM == 0:
		return geoknn.Options{}, errors.New("run: --list lists the references within a radius: give --within-m METRES too")
	case f.withinM > 0 && f.k != 1:
		return geoknn.Options{}, fmt.Errorf("run: --k %d with --within-m: a radius query answers every reference within the radius; drop --k, or use --k with --max-m for the k nearest within a distance", f.k)
	case f.keepUnmatched && !f.list:
		return geoknn.Options{}, errors.New("run: --keep-unmatched keeps the observations a --within-m --list leaves out: give both")
	case f.maxM > 0 && f.withinM > 0:
		return geoknn.Options{}, errors.New("run: --max-m goes with --k; with --within-m the radius is the limit")
	}
	for _, c := range []struct {
		flag string
		v    int
		ok   bool
		want string
	}{
		{"--repeat", f.repeat, f.repeat >= 1, "1 or more"},
		{"--validate", f.validate, f.validate >= 0, "0 or more answers"},
		{"--chunk-rows", f.chunkRows, f.chunkRows >= 0, "0 (chosen) or more rows"},
		{"--grid-side", f.gridSide, f.gridSide >= 0 && f.gridSide <= geoknn.MaxGridSide, fmt.Sprintf("0 (chosen) to %d", geoknn.MaxGridSide)},
	} {
		if !c.ok {
			return geoknn.Options{}, fmt.Errorf("run: %s %d: want %s", c.flag, c.v, c.want)
		}
	}
	if f.radians && !isNumPy(f.obs) && !isNumPy(f.ref) {
		return geoknn.Options{}, errors.New("run: --radians is for NumPy inputs (.npy, .npz), and neither --obs nor --ref is one")
	}
	opts, err := f.engineFlags.options()
	if err != nil {
		return opts, fmt.Errorf("run: %w", err)
	}
	opts.GridSide = f.gridSide
	f.q = f.query()
	return opts, nil
}

// runInputs is what knn run queries: the open searcher and the points,
// with the time each took to get ready.
// labels are the identifiers the inputs carry into the answers.
func (in *runInputs) labels() labels { return labels{obs: in.obs.ids, ref: in.ref.ids} }

type runInputs struct {
	s                  *geoknn.Searcher
	obs, ref           pointSet
	loadTime, openTime time.Duration
	trace              *geoknn.Trace
	res                *geoknn.Result  // a nearest query's answers, made while the engine started
	kres               *geoknn.KResult // a k-nearest query's, likewise (nil where they could not be)
	log                io.Writer       // reports: stderr
}

// openAndLoad loads the points while the engine starts (driver, contexts,
// PTX JIT). The caller closes the searcher.
func openAndLoad(ctx context.Context, f runFlags, opts geoknn.Options, stderr io.Writer) (*runInputs, error) {
	t0 := time.Now()
	openc := startEngine(opts, geoknn.NewSearcher)
	end := opts.Trace.Begin("host", "load/generate")
	obs, ref, loadErr := loadBoth(ctx, f)
	end()
	// The answers' memory is made ready while the engine starts.
	res, kres := f.answerMemory(obs.cols.Len(), ref.cols.Len(), obs.pts != nil || !isCount(f.obs), opts.Trace)
	loadTime := time.Since(t0)
	o := <-openc
	if o.err != nil {
		return nil, o.err
	}
	if loadErr != nil {
		o.s.Close()
		return nil, loadErr
	}
	return &runInputs{s: o.s, obs: obs, ref: ref, res: res, kres: kres, loadTime: loadTime, openTime: o.s.OpenTime(), trace: opts.Trace, log: stderr}, nil
}

// answerMemory makes the answers' memory of a nearest or k-nearest query
// over nObs observations and nRef references, its pages backed, while the
// engine starts: k answers a row are large (2^27 observations' 8 nearest:
// 8.6 GB), and backing their pages inside the query, on hosts whose page
// faults are slow, took most of it. A k-nearest query the checks after
// loading will refuse (k above the references, too little memory) gets
// none.
func (f *runFlags) answerMemory(nObs, nRef int, obsOnHost bool, tr *geoknn.Trace) (*geoknn.Result, *geoknn.KResult) {
	switch kind, _ := f.q.Kind(); {
	case kind == stream.KindNearest:
		defer tr.Begin("host", "allocate answers")()
		return geoknn.NewResult(nObs), nil
	case kind == stream.KindKNearest && f.q.Check(nRef) == nil && f.checkPlanMemory(nObs, nRef, obsOnHost) == nil:
		defer tr.Begin("host", "allocate answers")()
		return nil, geoknn.NewKResult(nObs, f.q.Asked())
	}
	return nil, nil
}

// timedQuery is one run of the query: its wall time and the engine's
// account of it.
type timedQuery struct {
	wall  time.Duration
	stats geoknn.Stats
}

// query runs nearest repeat times and returns the last answers with every
// run's times.
func (in *runInputs) query(ctx context.Context, repeat int, bar *progressBar, nearest func(context.Context, *geoknn.Result) error) (*geoknn.Result, []timedQuery, error) {
	res := in.res
	var queries []timedQuery
	for range repeat {
		bar.start(in.obs.cols.Len())
		t := time.Now()
		end := in.trace.Begin("host", "query")
		err := nearest(ctx, res)
		end()
		bar.done()
		if err != nil {
			return nil, nil, err
		}
		queries = append(queries, timedQuery{time.Since(t), res.Stats})
	}
	return res, queries, nil
}

// report prints the engine, the points and each query's times.
func (in *runInputs) report(w io.Writer, res *geoknn.Result, algo geoknn.Algorithm, queries []timedQuery) {
	pairs := float64(in.obs.cols.Len()) * float64(in.ref.cols.Len())
	fmt.Fprintf(w, "engine:       %s (%s), algorithm %s\n", res.Stats.Engine, strings.Join(res.Stats.Devices, ", "), algo)
	fmt.Fprintf(w, "observations: %d (%s)\nreferences:   %d (%s)\n", in.obs.cols.Len(), in.obs.desc, in.ref.cols.Len(), in.ref.desc)
	for r, q := range queries {
		fmt.Fprintf(w, "query %d:      %.3f s, %.3g pairs/s", r+1, q.wall.Seconds(), pairs/q.wall.Seconds())
		if st := q.stats; res.Stats.Engine == "gpu" {
			fmt.Fprintf(w, "; GPU kernels %.1f ms (index build %.2f ms), copies in %.1f ms, out %.1f ms; %d refined in float64",
				ms(st.Kernel), ms(st.Index), ms(st.Upload), ms(st.Download), st.Refined)
		}
		fmt.Fprintln(w)
	}
	if res.Stats.Note != "" {
		fmt.Fprintf(w, "index:        %s\n", res.Stats.Note)
	}
	fmt.Fprintf(w, "load/generate %.3f s, engine start %.3f s (concurrent), %d jobs\n", in.loadTime.Seconds(), in.openTime.Seconds(), res.Stats.Jobs)
}

// validate checks n sampled answers and prints the verdict; it fails when
// any is beyond the tolerance.
func (in *runInputs) validate(ctx context.Context, w io.Writer, res *geoknn.Result, n int, seed uint64) error {
	rep, err := validateSample(ctx, in.obs, in.ref, res, n, seed)
	if err != nil {
		return err
	}
	return verdict(w, rep)
}

// verdict prints a validation's report; it fails when any answer is
// beyond the tolerance.
func verdict(w io.Writer, rep validate.Report) error {
	fmt.Fprintf(w, "validate:     %s\n", rep)
	if !rep.OK() {
		for _, fl := range rep.Failures {
			fmt.Fprintf(w, "  %s\n", fl)
		}
		return errors.New("validation failed: answers beyond the 1 m tolerance")
	}
	return nil
}

// loadFile reads a file of points (CSV, GeoJSON, Parquet, Arrow or NumPy; "-":
// standard input), with the coordinate columns opts names.
func loadFile(ctx context.Context, path string, opts pointio.ReadOptions) (pointSet, error) {
	if !formats.ByContent(path) {
		// Straight into radian columns: a large CSV or Parquet file is
		// never held as points and as columns at once.
		lat, lon, ids, err := formats.ReadRadians(ctx, path, opts)
		if err != nil {
			return pointSet{}, err
		}
		return pointSet{cols: geoknn.Radians64(lat, lon), ids: ids, desc: path}, nil
	}
	pts, ids, err := formats.ReadPoints(ctx, path, opts)
	if err != nil {
		return pointSet{}, err
	}
	cols, err := geoknn.Degrees(pts) // pointio has validated them: this only converts
	if err != nil {
		return pointSet{}, fmt.Errorf("%s: point %w", path, err)
	}
	desc := path
	if path == "-" {
		desc = "standard input"
	}
	return pointSet{cols: cols, pts: pts, ids: ids, desc: desc}, nil
}

func loadBoth(ctx context.Context, f runFlags) (obs, ref pointSet, err error) {
	if obs, err = loadPoints(ctx, pointsArg{flag: "--obs", arg: f.obs, gen: f.gen, seed: f.seed, onHost: f.hostPoints, cols: f.readOptions(f.obsID)}); err != nil {
		return obs, ref, err
	}
	// The engine reads the radian columns; validation reads them back as
	// degrees. Dropping the points as read halves a file's footprint.
	obs.pts = nil
	ref, err = loadRef(ctx, f)
	return obs, ref, err
}

// readOptions is how the points files are read: the coordinate columns
// and units the flags name, and the id column (none: "").
func (f runFlags) readOptions(id string) pointio.ReadOptions {
	return pointio.ReadOptions{LatColumn: f.latCol, LonColumn: f.lonCol, Radians: f.radians, IDColumn: id}
}

// loadRef loads (or generates) the references alone.
func loadRef(ctx context.Context, f runFlags) (pointSet, error) {
	ref, err := loadPoints(ctx, pointsArg{flag: "--ref", arg: f.ref, gen: f.gen, seed: f.seed + 1, cols: f.readOptions(f.refID)})
	if err != nil {
		return ref, err
	}
	if ref.cols.Len() == 0 {
		return ref, fmt.Errorf("--ref %s: no reference points", f.ref)
	}
	ref.pts = nil
	return ref, nil
}

// pointSet is the loaded or generated points: radian columns for the
// engine, and for files the degrees as read (for validation).
type pointSet struct {
	cols geoknn.Points
	pts  []orb.Point // nil for generated sets
	ids  []string    // the --obs-id / --ref-id column, if asked for
	desc string
}

func (p pointSet) point(i int) orb.Point {
	if p.pts != nil {
		return p.pts[i]
	}
	return sphere.ToDegrees(p.cols.At(i))
}

// isNumPy reports whether path names a NumPy file (.npy or .npz).
func isNumPy(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".npy" || ext == ".npz"
}

// pointsArg is a --obs or --ref argument and what reading or making its
// points takes.
type pointsArg struct {
	flag, arg, gen string
	seed           uint64
	onHost         bool                // generated points in host columns
	cols           pointio.ReadOptions // files: the coordinate columns
}

// loadPoints reads a file, or makes a count of synthetic points: where they
// are used (see geoknn.Generated) when the generator allows it, unless
// a.onHost asks for host columns.
func loadPoints(ctx context.Context, a pointsArg) (pointSet, error) {
	flagName, gen, seed, onHost := a.flag, a.gen, a.seed, a.onHost
	n, isFile, err := resolveArg(flagName, a.arg)
	if err != nil {
		return pointSet{}, err
	}
	if isFile {
		return loadFile(ctx, a.arg, a.cols)
	}
	if a.cols.IDColumn != "" {
		return pointSet{}, usagef("%s-id: synthetic points have no id column", flagName)
	}
	limit, bytesPer := maxObservations, 8 // the answers
	if flagName == "--ref" {
		limit, bytesPer = maxReferences, 64 // columns, unit vectors, index
	}
	_, indexed := sphere.IndexedByName(gen)
	onHost = onHost || !indexed
	if onHost || flagName == "--ref" {
		bytesPer += 16 // float64 columns on the host
	}
	if err := checkCount(flagName, n, limit, bytesPer); err != nil {
		return pointSet{}, err
	}
	desc := fmt.Sprintf("synthetic %s, seed %d", gen, seed)
	if !onHost {
		// Made where it is used (on the GPUs, or point by point on the CPU).
		g, err := geoknn.ParseGenerator(gen)
		if err != nil {
			return pointSet{}, fmt.Errorf("--gen: %w", err)
		}
		cols, err := geoknn.Generated(g, n, seed)
		return pointSet{cols: cols, desc: desc}, err
	}
	fill, err := sphere.RadiansByName(gen)
	if err != nil {
		return pointSet{}, fmt.Errorf("--gen: %w", err)
	}
	lat, lon := make([]float64, n), make([]float64, n)
	if err := fill(n, seed, lat, lon); err != nil {
		return pointSet{}, err
	}
	return pointSet{cols: geoknn.Radians64(lat, lon), desc: desc}, nil
}

// validateSample checks n sampled answers against the float64 haversine
// brute force over every reference.
func validateSample(ctx context.Context, obs, ref pointSet, res *geoknn.Result, n int, seed uint64) (validate.Report, error) {
	sample := validate.SampleIndices(obs.cols.Len(), n, seed)
	refPts := make([]orb.Point, ref.cols.Len())
	for i := range refPts {
		refPts[i] = ref.point(i)
	}
	obsPts := make([]orb.Point, len(sample))
	idx := make([]uint32, len(sample))
	dist := make([]float32, len(sample))
	for k, i := range sample {
		obsPts[k], idx[k], dist[k] = obs.point(i), res.Index[i], res.DistanceRad[i]
	}
	return validate.Exact(ctx, obsPts, refPts, idx, dist)
}

func ms(d time.Duration) float64 { return d.Seconds() * 1e3 }
