package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/paulmach/orb"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/bench"
	"github.com/geoknn/geoknn/engine"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/simulator"
	"github.com/geoknn/geoknn/validate"
)

const runUsage = `Usage: knn run --obs COUNT|FILE --ref COUNT|FILE [flags]

Finds, for every observation, the nearest reference by great-circle distance,
exactly (within 1 m of the float64 haversine answer; ties to the lowest index).

--obs and --ref take a file or a count of synthetic points:
  file   CSV with a header naming the latitude and longitude columns in degrees
         (lat|latitude, lon|lng|long|longitude; any case and order; other
         columns ignored), or GeoJSON (FeatureCollection, Feature, Point,
         MultiPoint; .geojson/.json)
  count  2^27, 134217728 or 1e6: points drawn by --gen with --seed (the
         references with seed+1)

--out FILE.csv writes obs_index,ref_index,distance_m, one row per observation
in input order; --out FILE.npz writes the same as a NumPy archive of two arrays,
ref_index (uint32) and distance_m (float64), 12 bytes an observation. Either
appears only when the whole run succeeded.

Examples:
  knn run --obs 2^20 --ref 2^12
  knn run --obs cities.csv --ref airports.csv --out nearest.csv --validate 1000
  knn run --obs 2^27 --ref 2^16 --engine gpu --validate 65536
  knn run --obs 2^22 --ref 2^16 --algo seed     (the notebook's kernel, for comparison)

Flags:
`

type runFlags struct {
	obs, ref, gen, out            string
	engine, algo, memory          string
	seed                          uint64
	gpus, batch, validate, repeat int
	gridSide                      int
	quiet                         bool
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f runFlags
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.obs, "obs", "", "observations: a CSV/GeoJSON file or a count such as 2^27 (required)")
	fs.StringVar(&f.ref, "ref", "", "references: a CSV/GeoJSON file or a count such as 2^16 (required)")
	fs.StringVar(&f.gen, "gen", "sphere", "generator for counts: sphere (uniform on the sphere), seed (uniform in lat/lon degrees, as the reference notebook), clustered")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed for generated points")
	fs.StringVar(&f.out, "out", "", "write answers to this file: .csv (obs_index,ref_index,distance_m) or .npz (NumPy: ref_index, distance_m)")
	fs.StringVar(&f.engine, "engine", "auto", "auto (GPU if usable, else CPU), cpu or gpu")
	fs.StringVar(&f.algo, "algo", "grid", "grid (exact, cell index, falls back to brute when that is cheaper), brute (exact) or seed (the reference notebook's fp32 kernel, GPU only, a baseline)")
	fs.StringVar(&f.memory, "memory", "device", "GPU memory for observations and answers: device (async copies) or managed")
	fs.IntVar(&f.gpus, "gpus", 0, "number of GPUs to use (0 = all)")
	fs.IntVar(&f.batch, "batch-size", 0, "observations per job (0 = from free GPU memory)")
	fs.IntVar(&f.gridSide, "grid-side", 0, "grid algorithm: cells per axis (0 = chosen from a sample of the query)")
	fs.IntVar(&f.validate, "validate", 0, "check this many sampled answers against a float64 haversine brute force")
	fs.IntVar(&f.repeat, "repeat", 1, "run the query this many times on the open engine and report each time")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress bar")
	if helped, err := parseFlags(fs, runUsage, args, stderr); helped || err != nil {
		return err
	}
	if f.obs == "" || f.ref == "" {
		return errors.New("run: --obs and --ref are required (see knn run --help)")
	}
	if f.repeat < 1 || f.validate < 0 || f.gpus < 0 || f.batch < 0 || f.gridSide < 0 {
		return errors.New("run: --repeat must be >= 1; --validate, --gpus, --batch-size and --grid-side >= 0")
	}
	eng, err := geoknn.ParseEngine(f.engine)
	if err != nil {
		return err
	}
	algo, err := engine.ParseAlgorithm(f.algo)
	if err != nil {
		return err
	}
	mem, err := engine.ParseMemoryMode(f.memory)
	if err != nil {
		return err
	}

	t0 := time.Now()
	bar := newProgressBar(stderr, f.quiet)
	opts := geoknn.Options{Engine: eng, Algorithm: algo, GPUs: f.gpus, BatchSize: f.batch, GridSide: f.gridSide, Memory: mem, Progress: bar.update}
	// Start the engine (driver, contexts, PTX JIT) while the points load.
	type opened struct {
		s   *geoknn.Searcher
		err error
		d   time.Duration
	}
	openc := make(chan opened, 1)
	go func() {
		t := time.Now()
		s, err := geoknn.NewSearcher(opts)
		openc <- opened{s, err, time.Since(t)}
	}()
	obs, ref, loadErr := loadBoth(f)
	loadTime := time.Since(t0)
	o := <-openc
	if o.err != nil {
		return o.err
	}
	s, openTime := o.s, o.d
	defer s.Close()
	if loadErr != nil {
		return loadErr
	}
	if s.Fallback() != "" {
		fmt.Fprintf(stderr, "knn: no GPU (%s): running on the CPU\n", s.Fallback())
	}

	var res *geoknn.Result
	var walls []time.Duration
	var stats []engine.Stats
	for r := 0; r < f.repeat; r++ {
		bar.start(obs.cols.Len())
		t := time.Now()
		res, err = s.NearestRadians(ctx, obs.cols, ref.cols)
		bar.done()
		if err != nil {
			return err
		}
		walls = append(walls, time.Since(t))
		stats = append(stats, res.Stats)
	}

	pairs := float64(obs.cols.Len()) * float64(ref.cols.Len())
	fmt.Fprintf(stderr, "engine:       %s (%s), algorithm %s\n", res.Engine, strings.Join(res.Devices, ", "), algo)
	fmt.Fprintf(stderr, "observations: %d (%s)\nreferences:   %d (%s)\n", obs.cols.Len(), obs.desc, ref.cols.Len(), ref.desc)
	for r, w := range walls {
		fmt.Fprintf(stderr, "query %d:      %.3f s, %.3g pairs/s", r+1, w.Seconds(), pairs/w.Seconds())
		if st := stats[r]; res.Engine == "gpu" {
			fmt.Fprintf(stderr, "; GPU kernels %.1f ms (index build %.2f ms), copies in %.1f ms, out %.1f ms; %d refined in float64",
				ms(st.Kernel), ms(st.Index), ms(st.Upload), ms(st.Download), st.Refined)
		}
		fmt.Fprintln(stderr)
	}
	if res.Stats.Note != "" {
		fmt.Fprintf(stderr, "index:        %s\n", res.Stats.Note)
	}
	fmt.Fprintf(stderr, "load/generate %.3f s, engine start %.3f s (concurrent), %d jobs\n", loadTime.Seconds(), openTime.Seconds(), res.Stats.Jobs)

	if f.validate > 0 {
		rep, err := validateSample(ctx, obs, ref, res, f.validate, f.seed)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "validate:     %s\n", rep)
		if !rep.OK() {
			for _, fl := range rep.Failures {
				fmt.Fprintf(stderr, "  %s\n", fl)
			}
			return errors.New("validation failed: answers beyond the 1 m tolerance")
		}
	}
	if f.out != "" {
		t := time.Now()
		err := writeAnswers(f.out, res)
		if err != nil {
			return fmt.Errorf("writing %s: %w", f.out, err)
		}
		fmt.Fprintf(stderr, "wrote %s (%d rows) in %.3f s\n", f.out, len(res.Index), time.Since(t).Seconds())
	}
	fmt.Fprintf(stderr, "total:        %.3f s\n", time.Since(t0).Seconds())
	return nil
}

func loadBoth(f runFlags) (obs, ref pointSet, err error) {
	if obs, err = loadPoints("--obs", f.obs, f.gen, f.seed); err != nil {
		return obs, ref, err
	}
	if ref, err = loadPoints("--ref", f.ref, f.gen, f.seed+1); err != nil {
		return obs, ref, err
	}
	if ref.cols.Len() == 0 {
		return obs, ref, fmt.Errorf("--ref %s: no reference points", f.ref)
	}
	return obs, ref, nil
}

// pointSet is the loaded or generated points: radian columns for the
// engine, and for files the degrees as read (for validation).
type pointSet struct {
	cols engine.Points
	pts  []orb.Point // nil for generated sets
	desc string
}

func (p pointSet) point(i int) orb.Point {
	if p.pts != nil {
		return p.pts[i]
	}
	return simulator.ToDegrees(p.cols.At(i))
}

func loadPoints(flagName, arg, gen string, seed uint64) (pointSet, error) {
	if _, statErr := os.Stat(arg); statErr == nil {
		pts, err := pointio.ReadFile(arg)
		if err != nil {
			return pointSet{}, err
		}
		cols, err := geoknn.Radians(pts) // pointio has validated them: this only converts
		if err != nil {
			return pointSet{}, fmt.Errorf("%s: point %w", arg, err)
		}
		return pointSet{cols: cols, pts: pts, desc: arg}, nil
	}
	n, err := bench.ParseCount(arg)
	if err != nil {
		return pointSet{}, fmt.Errorf("%s %q: no such file, and not a count such as 2^20 or 1e6", flagName, arg)
	}
	fill, err := simulator.RadiansByName(gen)
	if err != nil {
		return pointSet{}, fmt.Errorf("--gen: %w", err)
	}
	lat, lon := make([]float64, n), make([]float64, n)
	if err := fill(n, seed, lat, lon); err != nil {
		return pointSet{}, err
	}
	return pointSet{cols: engine.Radians64(lat, lon), desc: fmt.Sprintf("synthetic %s, seed %d", gen, seed)}, nil
}

// validateSample checks n sampled answers against the float64 haversine
// brute force over every reference.
func validateSample(ctx context.Context, obs, ref pointSet, res *geoknn.Result, n int, seed uint64) (validate.Report, error) {
	total := obs.cols.Len()
	var sample []int
	if n >= total {
		sample = make([]int, total)
		for i := range sample {
			sample[i] = i
		}
	} else {
		r := rand.New(rand.NewPCG(seed, 0x5eed))
		seen := make(map[int]bool, n)
		for len(sample) < n {
			if i := r.IntN(total); !seen[i] {
				seen[i] = true
				sample = append(sample, i)
			}
		}
		sort.Ints(sample)
	}
	refPts := make([]orb.Point, ref.cols.Len())
	for i := range refPts {
		refPts[i] = ref.point(i)
	}
	obsPts := make([]orb.Point, len(sample))
	idx := make([]uint32, len(sample))
	dist := make([]float32, len(sample))
	for k, i := range sample {
		obsPts[k], idx[k], dist[k] = obs.point(i), res.Index[i], res.Distance[i]
	}
	return validate.Exact(ctx, obsPts, refPts, idx, dist)
}

func ms(d time.Duration) float64 { return d.Seconds() * 1e3 }

// writeAnswers writes res to path atomically: NumPy .npz for a .npz path,
// else CSV.
func writeAnswers(path string, res *geoknn.Result) error {
	answer := func(i int) (uint32, float64) { return res.Index[i], res.Metres(i) }
	return pointio.WriteAtomic(path, func(w *bufio.Writer) error {
		if strings.EqualFold(filepath.Ext(path), ".npz") {
			return pointio.WriteResultsNPZ(w, len(res.Index), answer)
		}
		return pointio.WriteResults(w, len(res.Index), answer)
	})
}
