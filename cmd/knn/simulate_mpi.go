package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"time"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/internal/ranks"
	"github.com/geoknn/geoknn/mpi"
	"github.com/geoknn/geoknn/simulator"
)

// simulateMPI is knn simulate --mpi: one rank of an MPI job. The
// observations are split into one contiguous range a rank, held in its
// engine (its GPU, or its cores) for the whole run; every rank moves every
// reference from the same seed, so all hold the same ones; each step's
// replaced and changed counts are summed over the ranks (MPI_Allreduce)
// and its times are the slowest rank's, so that rank 0 prints the table
// one process prints (the times aside). Step files are written by every
// rank, its rows at their offsets, as run --mpi writes --out (CSV, npz,
// Parquet; Arrow files are gathered to rank 0), into rank 0's temporary
// folder, moved into --out-dir at the end. An error on any rank ends the
// job (MPI_Abort), non-zero, with no step file.
func simulateMPI(ctx context.Context, f *simFlags, digits int, stdout, stderr io.Writer) error {
	if f.validate > 0 || f.obs == "-" || f.ref == "-" {
		return usagef("simulate --mpi: not with --validate or standard input")
	}
	return runRank(ctx, stderr, func(lib *mpi.Lib, world mpi.Comm) (ranks.Place, error) {
		r := &simRank{f: f, lib: lib, world: world, digits: digits, stdout: stdout, stderr: stderr}
		err := r.run(ctx)
		return r.Place, err
	})
}

// simRank is one rank's part of a simulation.
type simRank struct {
	ranks.Place
	f              *simFlags
	lib            *mpi.Lib
	world          mpi.Comm
	digits         int
	stdout, stderr io.Writer
	counts         []int         // every rank's observations
	out            *simOutput    // rank 0's
	shared         string        // the step files' format where every rank writes its rows
	dir            *ranks.Folder // rank 0's folder of the step files the ranks write
	stepTmp        string        // its name, at every rank
}

func (r *simRank) run(ctx context.Context) error {
	var err error
	if r.Place, err = ranks.Start(r.lib, r.world, 0, "simulate", r.f.settings()); err != nil {
		return err
	}
	r.f.engineOpts.GPUs, r.f.engineOpts.FirstGPU = r.GPUs, r.FirstGPU
	if r.f.outDir != "" && ranks.Together(r.f.outFormat, false) {
		r.shared = r.f.outFormat // else Arrow: gathered
	}
	cfg, obs, ref, err := r.config(ctx)
	if err != nil {
		return err
	}
	if err := r.openOutput(ctx); err != nil {
		return err
	}
	defer r.discard()
	sum, err := simulator.Run(ctx, cfg, func(s simulator.Step) error { return r.step(ctx, s) })
	if err != nil || r.Rank != 0 {
		return err
	}
	if r.dir != nil {
		if err := r.dir.Commit(); err != nil {
			return err
		}
	}
	return r.out.finish(sum, obs, ref)
}

// settings are the flags that decide what a simulation answers and
// writes: every rank must have the same.
func (f *simFlags) settings() []ranks.Setting {
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	return []ranks.Setting{
		{"--obs", f.obs}, {"--ref", f.ref}, {"--gen", f.gen}, {"--ref-gen", f.refGen},
		{"--seed", strconv.FormatUint(f.seed, 10)}, {"--steps", strconv.Itoa(f.steps)}, {"--dt", num(f.dt)},
		{"--speed", num(f.speed)}, {"--min-speed", num(f.minSpeed)}, {"--replace", num(f.replace)},
		{"--out-dir", f.outDir}, {"--out-format", f.outFormat}, {"--engine", f.engine}, {"--algo", f.algo},
		{"--memory", f.memory}, {"--gpus", strconv.Itoa(f.gpus)}, {"--batch-size", strconv.Itoa(f.batch)},
	}
}

// config is the rank's part of the simulation: its range of the
// observations (generated where it runs, or scattered from rank 0's file)
// and every reference (generated alike on every rank, or broadcast from
// rank 0's file). At rank 0 obs and ref describe the whole sets.
func (r *simRank) config(ctx context.Context) (simulator.Config, source, source, error) {
	obs, ref, err := r.loadAtRoot(ctx)
	if err != nil {
		return simulator.Config{}, obs, ref, err
	}
	head := []int64{int64(obs.len())}
	if err := r.world.Bcast(mpi.Bytes(head), 0); err != nil {
		return simulator.Config{}, obs, ref, err
	}
	n := int(head[0])
	if n < r.Size {
		return simulator.Config{}, obs, ref, fmt.Errorf("simulate --mpi: %d observations for %d ranks: at least one a rank", n, r.Size)
	}
	if g := ranks.GroupRows(r.shared); g > 0 && (n+g-1)/g < r.Size {
		r.shared = "" // whole row groups would leave a rank none (a session needs one): gathered
	}
	r.counts = ranks.Shares(r.shared, n, r.Size)
	lo, hi := mpi.Range(r.counts, r.Rank)
	part, err := r.spread(obs, &ref)
	if err != nil {
		return simulator.Config{}, obs, ref, err
	}
	cfg := r.f.config(source{count: n, init: part}, ref)
	cfg.Obs, cfg.Part = n, simulator.Part{Lo: lo, Hi: hi}
	cfg.Answers = func(int) bool { return r.f.outDir != "" }
	return cfg, obs, ref, cfg.Validate()
}

// loadAtRoot loads the sources at rank 0; the others learn counts alone
// from the flags, and files from rank 0.
func (r *simRank) loadAtRoot(ctx context.Context) (obs, ref source, err error) {
	if r.Rank != 0 {
		return source{}, source{}, nil
	}
	if obs, err = loadSource(ctx, "--obs", r.f.obs, r.f.gen, r.f.seed); err != nil {
		return obs, ref, fmt.Errorf("simulate: %w", err)
	}
	ref, err = r.f.loadRef(ctx, "simulate")
	return obs, ref, err
}

// spread gives the rank its initial observations (none: generated) and the
// references' source.
func (r *simRank) spread(obs source, ref *source) (geoknn.Points, error) {
	refCount, refFile, err := resolveArg("--ref", r.f.ref)
	if err != nil {
		return geoknn.Points{}, err
	}
	if refFile {
		lat, lon, err := ranks.Bcast(r.world, ref.init, 0)
		if err != nil {
			return geoknn.Points{}, err
		}
		ref.init = geoknn.Radians64(lat, lon)
	} else if r.Rank != 0 {
		ref.count = refCount
	}
	if _, obsFile, err := resolveArg("--obs", r.f.obs); err != nil || !obsFile {
		return geoknn.Points{}, err
	}
	lat, lon, err := ranks.Scatter(r.world, obs.init, r.counts, 0)
	return geoknn.Radians64(lat, lon), err
}

// step reduces a step over the ranks; rank 0 prints it and writes its
// file.
func (r *simRank) step(ctx context.Context, s simulator.Step) error {
	sums, err := r.world.SumFloat64s([]float64{float64(s.Replaced), float64(s.Changed)})
	if err != nil {
		return err
	}
	slow, err := r.world.MaxFloat64s([]float64{s.Wall.Seconds(), s.Query.Seconds(), s.Update.Seconds(),
		s.Stats.Kernel.Seconds(), s.Stats.Prepare.Seconds()})
	if err != nil {
		return err
	}
	whole := s.Result
	if r.shared != "" {
		err = r.writeStep(ctx, s)
	} else {
		whole, err = r.gatherStep(s)
	}
	if err != nil || r.Rank != 0 {
		return err
	}
	s.Replaced, s.Changed, s.ChangedFraction = int(sums[0]), int(sums[1]), 0
	if kept := ranks.Total(r.counts) - s.Replaced; kept > 0 && s.N > 1 {
		s.ChangedFraction = float64(s.Changed) / float64(kept)
	}
	secs := func(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }
	s.Wall, s.Query, s.Update = secs(slow[0]), secs(slow[1]), secs(slow[2])
	s.Stats.Kernel, s.Stats.Prepare = secs(slow[3]), secs(slow[4])
	s.Result = whole
	return r.out.step(ctx, s)
}

// gatherStep gathers the step's answers at rank 0 when step files are
// written (the rank's own Result elsewhere, or when none are).
func (r *simRank) gatherStep(s simulator.Step) (*geoknn.Result, error) {
	if r.f.outDir == "" {
		return s.Result, nil
	}
	var all *geoknn.Result
	var index []uint32
	var dist []float32
	if r.Rank == 0 {
		all = geoknn.NewResult(ranks.Total(r.counts))
		all.Stats, all.Fallback, index, dist = s.Result.Stats, s.Result.Fallback, all.Index, all.DistanceRad
	}
	return all, ranks.GatherRows(r.world, r.counts, 1, s.Result.Index, s.Result.DistanceRad, index, dist, 11)
}

// openOutput starts rank 0's output, the step files' folder and the
// table's heading, and tells every rank the folder. A signal removes the
// folder at once (rank 0 may be waiting in a collective that never returns
// when another rank ends the job); once committed there is none to remove.
func (r *simRank) openOutput(ctx context.Context) error {
	var tmp string
	if r.Rank == 0 {
		o, err := newSimOutput(r.f, r.stdout, r.stderr, r.digits)
		if err != nil {
			return err
		}
		if d := o.dir; d != nil {
			context.AfterFunc(ctx, d.Discard)
			if tmp = d.Temp(); r.shared != "" {
				o.dir, r.dir = nil, d // written by the ranks
			}
		}
		r.out = o
	}
	names, err := r.world.BcastStrings([]string{tmp}, 0)
	if err == nil {
		r.stepTmp = names[0]
	}
	return err
}

// discard removes the step files of a run that did not finish (rank 0).
func (r *simRank) discard() {
	if r.dir != nil {
		r.dir.Discard()
	}
	if r.out != nil && r.out.dir != nil {
		r.out.dir.Discard()
	}
}

// writeStep writes the rank's rows of step s's file, with the others'.
func (r *simRank) writeStep(ctx context.Context, s simulator.Step) error {
	name := stepName(s.N, r.digits, r.f.outFormat)
	if r.Rank == 0 {
		r.dir.Path(name)
		r.out.written++
	}
	out := &ranks.Output{World: r.world, Rank: r.Rank, Size: r.Size, Path: filepath.Join(r.stepTmp, name), Format: r.shared, N: ranks.Total(r.counts)}
	return out.Write(ctx, ranks.NearestPart(s.Result.Answers(), ranks.Offset(r.counts, r.Rank)))
}

// finish puts the step files in place and prints the summary.
func (o *simOutput) finish(sum simulator.Summary, obs, ref source) error {
	o.bar.clear()
	if o.dir != nil {
		if err := o.dir.Commit(); err != nil {
			return err
		}
	}
	o.printResults(sum, obs, ref, true)
	return nil
}
