package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"image"
	"io"
	"strings"
	"time"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/internal/picture"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/simulator"
)

const plotUsage = `Usage: knn plot --ref COUNT|FILE (--obs COUNT|FILE | --grid) --png OUT.png [flags]
       knn plot --simulate --ref COUNT|FILE (--grid | --obs COUNT|FILE) [--gif OUT.gif] [--strip OUT.png] [flags]

Draws the decision regions of the nearest-reference query on a map of the
Earth in equirectangular projection (--width x --width/2 pixels, 30°
graticule): every observation is a pixel in the colour of its nearest
reference (a fixed colour per reference index), and the references are dark
dots.

--grid makes every pixel centre an observation, which shows the regions
(spherical Voronoi cells) in full, with their borders; with --obs as well, the
observations are drawn in strong colours over the pale regions.

--simulate moves the references as knn simulate does and draws frames:
--gif writes an animation of up to --frames steps (evenly spaced), --strip a
row of --strip-frames steps side by side, --png the last step. Each frame is
labelled with its simulated time.

Files appear only when the whole run succeeded.

Examples:
  knn plot --obs cities.csv --ref airports.csv --png nearest.png
  knn plot --grid --obs cities.csv --ref airports.csv --png regions.png --width 2000
  knn plot --grid --ref 2^8 --png voronoi.png
  knn plot --simulate --grid --ref 2^8 --steps 30 --dt 600 --gif moving.gif --strip strip.png

Flags:
`

type plotFlags struct {
	simFlags
	png, gif, stripOut   string
	width, frames, delay int
	stripFrames          int
	grid, simulate       bool
}

func cmdPlot(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f plotFlags
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.obs, "obs", "", "observations: a CSV/GeoJSON file or a count such as 2^20")
	fs.StringVar(&f.ref, "ref", "", "references: a CSV/GeoJSON file or a count such as 2^8 (required)")
	fs.BoolVar(&f.grid, "grid", false, "observations at every pixel centre: the regions in full")
	fs.StringVar(&f.png, "png", "", "write the picture (with --simulate: the last step) to this PNG file")
	fs.IntVar(&f.width, "width", 1600, "picture width in pixels, even; the height is half (default 800 with --simulate)")
	fs.BoolVar(&f.simulate, "simulate", false, "move the references (as knn simulate) and draw frames")
	addSimulationFlags(fs, &f.simFlags, 30, 600)
	fs.StringVar(&f.gif, "gif", "", "with --simulate: write an animated GIF")
	fs.IntVar(&f.frames, "frames", 30, "with --gif: at most this many frames, evenly spaced over the steps")
	fs.IntVar(&f.delay, "delay", 40, "with --gif: hundredths of a second per frame")
	fs.StringVar(&f.stripOut, "strip", "", "with --simulate: write a PNG of --strip-frames frames side by side")
	fs.IntVar(&f.stripFrames, "strip-frames", 5, "with --strip: the number of frames, evenly spaced over the steps")
	fs.BoolVar(&f.quiet, "quiet", false, "print nothing but errors")
	fs.BoolVar(&f.quiet, "q", false, "short for --quiet")
	if helped, err := parseFlags(fs, plotUsage, args, stdout, stderr); helped || err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if err := f.checkPlot(set); err != nil {
		return usageError{err}
	}
	if err := checkOutputs(fs, []string{"png", "gif", "strip"}, []string{f.png, f.gif, f.stripOut}, []string{f.obs, f.ref}); err != nil {
		return err
	}
	if f.simulate {
		return plotSimulation(ctx, &f, stderr)
	}
	return plotStatic(ctx, &f, stderr)
}

// checkPlot validates knn plot's flags; set holds the names of those
// given.
func (f *plotFlags) checkPlot(set map[string]bool) error {
	if f.ref == "" {
		return errors.New("plot: --ref is required (see knn plot --help)")
	}
	if f.obs == "" && !f.grid {
		return errors.New("plot: give --obs, --grid or both")
	}
	if f.simulate && !set["width"] {
		f.width = 800
	}
	if f.width < 32 || f.width > 16384 || f.width%2 != 0 {
		return fmt.Errorf("plot: --width %d: want an even number from 32 to 16384", f.width)
	}
	var err error
	if f.simulate {
		err = f.checkSimulation()
	} else {
		err = f.checkStatic(set)
	}
	if err != nil {
		return err
	}
	for _, o := range []struct{ flag, path, ext string }{{"--png", f.png, ".png"}, {"--gif", f.gif, ".gif"}, {"--strip", f.stripOut, ".png"}} {
		if o.path != "" && !strings.EqualFold(fileExt(o.path), o.ext) {
			return fmt.Errorf("plot: %s %s: the file name must end in %s", o.flag, o.path, o.ext)
		}
	}
	return f.check("plot")
}

// checkStatic checks that a plot without --simulate has its --png and none
// of the flags of --simulate.
func (f *plotFlags) checkStatic(set map[string]bool) error {
	for _, name := range []string{"gif", "strip", "frames", "strip-frames", "delay", "steps", "dt", "speed", "min-speed", "replace"} {
		if set[name] {
			return fmt.Errorf("plot: --%s needs --simulate", name)
		}
	}
	if f.png == "" {
		return errors.New("plot: --png is required")
	}
	return nil
}

// checkSimulation checks the outputs and frames of plot --simulate.
func (f *plotFlags) checkSimulation() error {
	if f.png == "" && f.gif == "" && f.stripOut == "" {
		return errors.New("plot: --simulate needs an output: --gif, --strip or --png")
	}
	if f.grid && f.obs != "" {
		return errors.New("plot: with --simulate, give --grid or --obs, not both")
	}
	if f.grid && f.replace > 0 {
		return errors.New("plot: --replace replaces observations: use it with --obs, not --grid")
	}
	if f.frames < 1 || f.frames > 1000 || f.stripFrames < 1 || f.stripFrames > 20 || f.delay < 1 {
		return errors.New("plot: --frames must be 1 to 1000, --strip-frames 1 to 20, --delay >= 1")
	}
	return nil
}

func fileExt(p string) string {
	if i := strings.LastIndexByte(p, '.'); i >= 0 && !strings.ContainsRune(p[i:], '/') {
		return p[i:]
	}
	return ""
}

func (f *plotFlags) logf(w io.Writer, format string, args ...any) {
	if !f.quiet {
		fmt.Fprintf(w, format, args...)
	}
}

func plotStatic(ctx context.Context, f *plotFlags, stderr io.Writer) error {
	t0 := time.Now()
	obs, ref, err := f.loadStatic(ctx)
	if err != nil {
		return err
	}
	bar := newProgressBar(stderr, f.quiet)
	opts := f.engineOpts
	opts.Progress = bar.update
	s, err := geoknn.NewSearcher(opts)
	if err != nil {
		return err
	}
	defer s.Close()
	query := func(obs geoknn.Points) (*geoknn.Result, error) {
		bar.start(obs.Len())
		defer bar.done()
		return s.Nearest(ctx, obs, ref.cols)
	}
	if s.Fallback() != "" {
		f.logf(stderr, "knn: no GPU (%s): running on the CPU\n", s.Fallback())
	}
	c, what, err := f.drawStatic(query, obs, ref)
	if err != nil {
		return err
	}
	if err := writeImage(ctx, f.png, c.PNGImage()); err != nil {
		return err
	}
	f.logf(stderr, "plot: %s, %d references (%s) on the %s in %.3f s\n", strings.Join(what, " and "), ref.cols.Len(), ref.desc, s.Engine(), time.Since(t0).Seconds())
	w, h := c.Size()
	f.logf(stderr, "wrote %s (%d x %d)\n", f.png, w, h)
	return nil
}

// loadStatic loads the references and, when given, the observations of a
// plot without --simulate.
func (f *plotFlags) loadStatic(ctx context.Context) (obs, ref pointSet, err error) {
	ref, err = loadPoints(ctx, pointsArg{flag: "--ref", arg: f.ref, gen: f.refGen, seed: f.seed + 1})
	if err != nil {
		return obs, ref, err
	}
	if ref.cols.Len() == 0 {
		return obs, ref, fmt.Errorf("--ref %s: no reference points", f.ref)
	}
	if f.obs != "" {
		if obs, err = loadPoints(ctx, pointsArg{flag: "--obs", arg: f.obs, gen: f.gen, seed: f.seed}); err != nil {
			return obs, ref, err
		}
	}
	return obs, ref, nil
}

// drawStatic draws the regions of --grid and the observations, with the
// answers of query, and the references; it returns the picture and what it
// shows.
func (f *plotFlags) drawStatic(query func(geoknn.Points) (*geoknn.Result, error), obs, ref pointSet) (*picture.Canvas, []string, error) {
	scene := picture.Scene{Width: f.width, Ref: ref.cols}
	var what []string
	if f.grid {
		res, err := query(picture.GridPoints(f.width))
		if err != nil {
			return nil, nil, err
		}
		scene.Regions = res.Index
		what = append(what, fmt.Sprintf("%d grid pixels", len(res.Index)))
	}
	if f.obs != "" {
		res, err := query(obs.cols)
		if err != nil {
			return nil, nil, err
		}
		scene.Obs, scene.ObsIndex = obs.cols, res.Index
		what = append(what, fmt.Sprintf("%d observations (%s)", obs.cols.Len(), obs.desc))
	}
	return picture.Draw(scene), what, nil
}

// evenSteps returns k of the steps 1..n, evenly spaced from the first to
// the last (all of them when k >= n).
func evenSteps(n, k int) map[int]bool {
	sel := map[int]bool{}
	if k >= n {
		for i := 1; i <= n; i++ {
			sel[i] = true
		}
		return sel
	}
	if k == 1 {
		return map[int]bool{n: true}
	}
	for j := range k {
		sel[1+int(float64(j)*float64(n-1)/float64(k-1)+0.5)] = true
	}
	return sel
}

func plotSimulation(ctx context.Context, f *plotFlags, stderr io.Writer) error {
	t0 := time.Now()
	obs, err := f.simulationObs(ctx)
	if err != nil {
		return err
	}
	cfg, ref, err := f.configWithRefs(ctx, "plot", obs)
	if err != nil {
		return err
	}
	fr := newFrames(f)
	bar := newStepBar(stderr, f.quiet)
	sum, err := simulator.Run(ctx, cfg, func(s simulator.Step) error {
		defer bar.show(s.N, f.steps, t0)
		if s.N == 1 && s.Result.Fallback != "" {
			f.logf(stderr, "knn: no GPU (%s): running on the CPU\n", s.Result.Fallback)
		}
		fr.add(s)
		return nil
	})
	bar.clear()
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("plot: interrupted after %d steps", sum.Steps)
		}
		return err
	}
	if err := fr.write(ctx, stderr); err != nil {
		return err
	}
	f.logf(stderr, "plot: %d steps of %d observations and %d references on the %s (%s), query median %.3f s; %.3f s in all\n",
		sum.Steps, obs.len(), ref.len(), sum.Engine, strings.Join(sum.Devices, ", "), sum.Median.Seconds(), time.Since(t0).Seconds())
	return nil
}

// simulationObs is the observations of plot --simulate: the pixel grid
// with --grid, else --obs.
func (f *plotFlags) simulationObs(ctx context.Context) (source, error) {
	if f.grid {
		return source{init: picture.GridPoints(f.width), desc: "grid"}, nil
	}
	obs, err := loadSource(ctx, "--obs", f.obs, f.gen, f.seed)
	if err != nil {
		return obs, fmt.Errorf("plot: %w", err)
	}
	return obs, nil
}

// frames collects the pictures of a simulation that plot writes: those of
// the --gif steps, of the --strip steps, and the last one for --png.
type frames struct {
	f                    *plotFlags
	gifSteps, stripSteps map[int]bool
	anim                 picture.Animation
	strip                []*picture.Canvas
	last                 *picture.Canvas
}

func newFrames(f *plotFlags) *frames {
	fr := &frames{f: f, gifSteps: map[int]bool{}, stripSteps: map[int]bool{}}
	if f.gif != "" {
		fr.gifSteps = evenSteps(f.steps, f.frames)
	}
	if f.stripOut != "" {
		fr.stripSteps = evenSteps(f.steps, f.stripFrames)
	}
	return fr
}

// add draws step s if any output wants it.
func (fr *frames) add(s simulator.Step) {
	f := fr.f
	if !fr.gifSteps[s.N] && !fr.stripSteps[s.N] && !(f.png != "" && s.N == f.steps) {
		return
	}
	scene := picture.Scene{Width: f.width, Ref: s.Ref, Label: picture.SimTime(s.Time)}
	if f.grid {
		scene.Regions = s.Result.Index
	} else {
		scene.Obs, scene.ObsIndex = s.Obs, s.Result.Index
	}
	c := picture.Draw(scene)
	if fr.gifSteps[s.N] {
		fr.anim.Add(c, f.delay)
	}
	if fr.stripSteps[s.N] {
		fr.strip = append(fr.strip, c)
	}
	fr.last = c
}

// write writes the files asked for, --gif, --strip and --png, all of them
// or (on an error or a signal) none.
func (fr *frames) write(ctx context.Context, stderr io.Writer) error {
	f := fr.f
	var outs []pointio.Output
	var notes []string
	if f.gif != "" {
		outs = append(outs, pointio.Output{Path: f.gif, Write: fr.anim.Encode})
		notes = append(notes, fmt.Sprintf("wrote %s (%d frames of %d x %d)\n", f.gif, fr.anim.Frames(), f.width, f.width/2))
	}
	if f.stripOut != "" {
		st := picture.Strip(fr.strip)
		img := st.PNGImage()
		w, h := st.Size()
		outs = append(outs, pointio.Output{Path: f.stripOut, Write: func(w *bufio.Writer) error { return picture.WritePNG(w, img) }})
		notes = append(notes, fmt.Sprintf("wrote %s (%d frames, %d x %d)\n", f.stripOut, len(fr.strip), w, h))
	}
	if f.png != "" {
		img := fr.last.PNGImage()
		w, h := fr.last.Size()
		outs = append(outs, pointio.Output{Path: f.png, Write: func(w *bufio.Writer) error { return picture.WritePNG(w, img) }})
		notes = append(notes, fmt.Sprintf("wrote %s (step %d, %d x %d)\n", f.png, f.steps, w, h))
	}
	if err := pointio.WriteAll(ctx, nil, outs); err != nil {
		return err
	}
	for _, n := range notes {
		f.logf(stderr, "%s", n)
	}
	return nil
}

func writeImage(ctx context.Context, path string, img image.Image) error {
	return pointio.Write(ctx, path, nil, func(w *bufio.Writer) error { return picture.WritePNG(w, img) })
}
