package bench

import (
	"bufio"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/geoknn/geoknn/pointio"
)

// Plot writes the report's plot as a PNG to path, atomically: see WritePNG.
func (r *Report) Plot(path string) error {
	return pointio.WriteAtomic(path, func(w *bufio.Writer) error { return r.WritePNG(w) })
}

// WritePNG draws the valid cases: median wall time (solid line, a glyph
// and min-max bar per case) and median kernel time (dashed) against pairs on
// log-log axes, one line per engine, GPU count and algorithm (and
// generator, when several were swept), one panel per --obs/--ref shape.
// Where a shape has several cases of one line at equal pairs the line goes
// through their geometric mean. When some algorithm ran at several GPU
// counts a last panel shows the speed-up over the fewest GPUs against the
// GPU count, for each algorithm and generator at the largest problem
// measured at several counts.
func (r *Report) WritePNG(w io.Writer) error {
	panels, err := r.timePlots()
	if err != nil {
		return err
	}
	if sp := r.scalingPlot(); sp != nil {
		panels = append(panels, sp)
	}
	cols := min(2, len(panels))
	rows := (len(panels) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, cols)
	}
	for i, p := range panels {
		grid[i/cols][i%cols] = p
	}
	const dpi = 96
	panelW, panelH := 8*vg.Inch, 5.5*vg.Inch
	img := vgimg.NewWith(vgimg.UseWH(panelW*vg.Length(cols), panelH*vg.Length(rows)), vgimg.UseDPI(dpi))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Inch / 3, PadY: vg.Inch / 4, PadTop: vg.Inch / 8,
		PadBottom: vg.Inch / 8, PadLeft: vg.Inch / 8, PadRight: vg.Inch / 4}
	canvases := plot.Align(grid, tiles, dc)
	for i := range grid {
		for j, p := range grid[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	_, err = vgimg.PngCanvas{Canvas: img}.WriteTo(w)
	return err
}

// series is one line of a time panel: per distinct pairs value, the cases'
// wall and kernel medians and wall bars.
type series struct {
	label  string
	color  int
	points []*Case
	scaled bool
}

type errXYs struct {
	plotter.XYs
	lo, hi []float64
}

func (e errXYs) YError(i int) (float64, float64) { return e.lo[i], e.hi[i] }

func (r *Report) host() string {
	if len(r.Env.Devices) > 0 {
		d := r.Env.Devices[0]
		if len(r.Env.Devices) > 1 {
			return fmt.Sprintf("%d × %s", len(r.Env.Devices), d.Name)
		}
		return d.Name
	}
	if r.Env.CPUModel != "" {
		return fmt.Sprintf("%d CPUs, %s", r.Env.NumCPU, r.Env.CPUModel)
	}
	return fmt.Sprintf("%d CPUs", r.Env.NumCPU)
}

func (r *Report) plotted() []*Case {
	var out []*Case
	for i := range r.Cases {
		if c := &r.Cases[i]; c.Valid() && c.WallStats.Median > 0 {
			out = append(out, c)
		}
	}
	return out
}

// seriesLabel names a case's line; colours are by label, the same in every
// panel.
func (r *Report) seriesLabels() (func(*Case) string, map[string]int) {
	gens := map[string]bool{}
	for _, c := range r.plotted() {
		gens[c.Generator] = true
	}
	label := func(c *Case) string {
		if len(gens) > 1 {
			return c.Label() + " " + c.Generator
		}
		return c.Label()
	}
	colors := map[string]int{}
	for _, c := range r.plotted() {
		if _, ok := colors[label(c)]; !ok {
			colors[label(c)] = len(colors)
		}
	}
	return label, colors
}

func spanText(ns []int) string {
	if len(ns) == 1 {
		return FormatCount(ns[0])
	}
	return FormatCount(ns[0]) + "…" + FormatCount(ns[len(ns)-1])
}

// timePlots draws one panel per shape of the sweep (one for all cases when
// the report has no shapes).
func (r *Report) timePlots() ([]*plot.Plot, error) {
	cases := r.plotted()
	if len(cases) == 0 {
		return nil, errors.New("plot: no valid case to draw")
	}
	label, colors := r.seriesLabels()
	var panels []*plot.Plot
	for _, sh := range r.Settings.Shapes {
		var in []*Case
		for _, c := range cases {
			if slices.Contains(sh.Obs, c.Obs) && (slices.Contains(sh.Ref, c.Ref) || c.Generator == GenCities) {
				in = append(in, c)
			}
		}
		if len(in) == 0 {
			continue
		}
		title := fmt.Sprintf("obs %s × ref %s — %s", spanText(sh.Obs), spanText(sh.Ref), r.host())
		p, err := timePlot(title, in, label, colors)
		if err != nil {
			return nil, err
		}
		panels = append(panels, p)
	}
	if len(panels) == 0 {
		p, err := timePlot("time vs pairs — "+r.host(), cases, label, colors)
		if err != nil {
			return nil, err
		}
		panels = append(panels, p)
	}
	return panels, nil
}

// timePlot is one time panel: a series per label of the cases.
func timePlot(title string, cases []*Case, label func(*Case) string, colors map[string]int) (*plot.Plot, error) {
	all := groupSeries(cases, label, colors)
	p := timeAxes(title)
	b := bounds{xmin: math.Inf(1), ymin: math.Inf(1)}
	for _, s := range all {
		if err := s.draw(p, &b); err != nil {
			return nil, err
		}
	}
	p.X.Min, p.X.Max = b.xmin/1.6, b.xmax*1.6
	p.Y.Min, p.Y.Max = b.ymin/2, b.ymax*4
	return p, nil
}

// groupSeries sorts the cases into series by label, in colour order.
func groupSeries(cases []*Case, label func(*Case) string, colors map[string]int) []*series {
	var all []*series
	byLabel := map[string]*series{}
	for _, c := range cases {
		l := label(c)
		s := byLabel[l]
		if s == nil {
			s = &series{label: l, color: colors[l]}
			byLabel[l] = s
			all = append(all, s)
		}
		s.points = append(s.points, c)
		s.scaled = s.scaled || c.Scaled()
	}
	slices.SortStableFunc(all, func(a, b *series) int { return a.color - b.color })
	return all
}

// timeAxes is an empty time panel: log-log axes of time against pairs.
func timeAxes(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "pairs (observations × references)"
	// A long rotated Y label makes gonum pad the plot's top: keep it short.
	p.Y.Label.Text = "time (median)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = pow2Ticks{}, secondTicks{}
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	return p
}

// bounds is the extent of the data of a time panel.
type bounds struct{ xmin, xmax, ymin, ymax float64 }

// add widens b to case c's pairs, wall range and kernel median.
func (b *bounds) add(c *Case) {
	b.xmin, b.xmax = min(b.xmin, c.Pairs), max(b.xmax, c.Pairs)
	b.ymin, b.ymax = min(b.ymin, c.WallStats.Min), max(b.ymax, c.WallStats.Max)
	if c.KernelStats.Median > 0 {
		b.ymin = min(b.ymin, c.KernelStats.Median)
	}
}

// draw adds the series to p, widening b to its data: the wall medians with
// min-max bars and their line, then the kernel medians.
func (s *series) draw(p *plot.Plot, b *bounds) error {
	col := plotutil.Color(s.color)
	var pts errXYs
	for _, c := range s.points {
		pts.XYs = append(pts.XYs, plotter.XY{X: c.Pairs, Y: c.WallStats.Median})
		pts.lo = append(pts.lo, c.WallStats.Median-c.WallStats.Min)
		pts.hi = append(pts.hi, c.WallStats.Max-c.WallStats.Median)
		b.add(c)
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return err
	}
	sc.Color, sc.Shape, sc.Radius = col, plotutil.Shape(s.color), vg.Points(3)
	eb, err := plotter.NewYErrorBars(pts)
	if err != nil {
		return err
	}
	eb.Color, eb.CapWidth = col, vg.Points(4)
	l, err := plotter.NewLine(geoMeanLine(s.points, func(c *Case) float64 { return c.WallStats.Median }))
	if err != nil {
		return err
	}
	l.Color, l.Width = col, vg.Points(1.5)
	p.Add(l, sc, eb)
	name := s.label + " wall"
	if s.scaled {
		name += " (~ partly scaled)"
	}
	p.Legend.Add(name, l, sc)
	return s.drawKernel(p, col)
}

// drawKernel adds the series' kernel medians to p, dashed, if it has any.
func (s *series) drawKernel(p *plot.Plot, col color.Color) error {
	k := geoMeanLine(s.points, func(c *Case) float64 { return c.KernelStats.Median })
	if len(k) == 0 {
		return nil
	}
	kl, err := plotter.NewLine(k)
	if err != nil {
		return err
	}
	kl.Color, kl.Width, kl.Dashes = col, vg.Points(1.5), []vg.Length{vg.Points(5), vg.Points(3)}
	// Markers too: a sweep of one size has no line to dash.
	ks, err := plotter.NewScatter(k)
	if err != nil {
		return err
	}
	ks.Color, ks.Shape, ks.Radius = col, draw.CrossGlyph{}, vg.Points(3)
	p.Add(kl, ks)
	p.Legend.Add(s.label+" kernel", kl, ks)
	return nil
}

// geoMeanLine is, for each distinct pairs value in increasing order, the
// geometric mean of f over the cases with that many pairs (cases where f is
// 0 are left out).
func geoMeanLine(cases []*Case, f func(*Case) float64) plotter.XYs {
	sum, n := map[float64]float64{}, map[float64]int{}
	var xs []float64
	for _, c := range cases {
		v := f(c)
		if v <= 0 {
			continue
		}
		if n[c.Pairs] == 0 {
			xs = append(xs, c.Pairs)
		}
		sum[c.Pairs] += math.Log(v)
		n[c.Pairs]++
	}
	slices.Sort(xs)
	out := make(plotter.XYs, len(xs))
	for i, x := range xs {
		out[i] = plotter.XY{X: x, Y: math.Exp(sum[x] / float64(n[x]))}
	}
	return out
}

// scalingPlot is the speed-up panel, or nil when no algorithm ran on the
// GPU at several counts.
func (r *Report) scalingPlot() *plot.Plot {
	lines, counts := r.scalingLines()
	if len(lines) == 0 {
		return nil
	}
	gmin, gmax := counts[0], counts[len(counts)-1]
	p := scalingAxes(counts)
	ymax := float64(gmax) / float64(gmin)
	for i, ln := range lines {
		ln.draw(p, i)
		ymax = ln.top(ymax)
	}
	p.X.Min, p.X.Max = float64(gmin)-0.25, float64(gmax)+0.25
	p.Y.Min, p.Y.Max = 0, ymax*1.15
	return p
}

// scalingKey is an algorithm and generator of the speed-up panel, and
// problemSize a size pair.
type (
	scalingKey  struct{ algo, gen string }
	problemSize struct{ obs, ref int }
)

// scalingLine is one line of the speed-up panel: wall and kernel speed-ups
// against the GPU count.
type scalingLine struct {
	label        string
	wall, kernel plotter.XYs
}

// scalingLines is a line per algorithm and generator run at several GPU
// counts, at its largest such problem, and the GPU counts they hold, in
// increasing order.
func (r *Report) scalingLines() ([]scalingLine, []int) {
	groups, keys := r.gpuCases()
	var lines []scalingLine
	var counts []int
	for _, k := range keys {
		best, ok := largestScaled(groups[k])
		if !ok {
			continue
		}
		ln, gpus := speedupLine(k, best, groups[k][best])
		for _, g := range gpus {
			if !slices.Contains(counts, g) {
				counts = append(counts, g)
			}
		}
		lines = append(lines, ln)
	}
	slices.Sort(counts)
	return lines, counts
}

// gpuCases groups the valid GPU cases by algorithm and generator (keys
// in order of appearance), then by size and GPU count.
func (r *Report) gpuCases() (map[scalingKey]map[problemSize]map[int]*Case, []scalingKey) {
	groups := map[scalingKey]map[problemSize]map[int]*Case{}
	var keys []scalingKey
	for i := range r.Cases {
		c := &r.Cases[i]
		if c.Engine != EngineGPU || !c.Valid() || c.WallStats.Median <= 0 {
			continue
		}
		k := scalingKey{c.Algorithm, c.Generator}
		if groups[k] == nil {
			groups[k] = map[problemSize]map[int]*Case{}
			keys = append(keys, k)
		}
		sz := problemSize{c.Obs, c.Ref}
		if groups[k][sz] == nil {
			groups[k][sz] = map[int]*Case{}
		}
		groups[k][sz][c.GPUs] = c
	}
	return groups, keys
}

// largestScaled is the size of the most pairs that ran at two or more GPU
// counts, and false when there is none.
func largestScaled(sizes map[problemSize]map[int]*Case) (problemSize, bool) {
	var best problemSize
	var bestPairs float64
	for sz, m := range sizes {
		if p := float64(sz.obs) * float64(sz.ref); len(m) >= 2 && p > bestPairs {
			best, bestPairs = sz, p
		}
	}
	return best, bestPairs != 0
}

// speedupLine is the speed-up of one problem's cases over its case on the
// fewest GPUs, and the GPU counts, in increasing order.
func speedupLine(k scalingKey, sz problemSize, byGPUs map[int]*Case) (scalingLine, []int) {
	counts := make([]int, 0, len(byGPUs))
	for g := range byGPUs {
		counts = append(counts, g)
	}
	slices.Sort(counts)
	base := byGPUs[counts[0]]
	ln := scalingLine{label: fmt.Sprintf("%s %s %s×%s", k.algo, k.gen, FormatCount(sz.obs), FormatCount(sz.ref))}
	for _, g := range counts {
		c := byGPUs[g]
		ln.wall = append(ln.wall, plotter.XY{X: float64(g), Y: base.WallStats.Median / c.WallStats.Median})
		if base.KernelStats.Median > 0 && c.KernelStats.Median > 0 {
			ln.kernel = append(ln.kernel, plotter.XY{X: float64(g), Y: base.KernelStats.Median / c.KernelStats.Median})
		}
	}
	return ln, counts
}

// scalingAxes is the speed-up panel with its axes, a tick per GPU count
// and the ideal (linear) speed-up.
func scalingAxes(counts []int) *plot.Plot {
	gmin, gmax := counts[0], counts[len(counts)-1]
	p := plot.New()
	p.Title.Text = "speed-up vs GPU count"
	p.X.Label.Text = "GPUs"
	p.Y.Label.Text = fmt.Sprintf("speed-up over %d GPU(s)", gmin)
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	var ct plot.ConstantTicks
	for _, g := range counts {
		ct = append(ct, plot.Tick{Value: float64(g), Label: fmt.Sprint(g)})
	}
	p.X.Tick.Marker = ct
	ideal, _ := plotter.NewLine(plotter.XYs{{X: float64(gmin), Y: 1}, {X: float64(gmax), Y: float64(gmax) / float64(gmin)}})
	ideal.Color, ideal.Dashes = color.Gray{Y: 128}, []vg.Length{vg.Points(2), vg.Points(2)}
	p.Add(ideal)
	p.Legend.Add("ideal", ideal)
	return p
}

// draw adds the line to p in the i-th colour and glyph: wall solid with
// points, kernel dashed.
func (ln scalingLine) draw(p *plot.Plot, i int) {
	col := plotutil.Color(i)
	l, pts, _ := plotter.NewLinePoints(ln.wall)
	l.Color, l.Width = col, vg.Points(1.5)
	pts.Color, pts.Shape, pts.Radius = col, plotutil.Shape(i), vg.Points(3)
	p.Add(l, pts)
	p.Legend.Add(ln.label+" wall", l, pts)
	if len(ln.kernel) > 0 {
		kl, _ := plotter.NewLine(ln.kernel)
		kl.Color, kl.Width, kl.Dashes = col, vg.Points(1.5), []vg.Length{vg.Points(5), vg.Points(3)}
		p.Add(kl)
		p.Legend.Add(ln.label+" kernel", kl)
	}
}

// top is the larger of ymax and the line's highest speed-up.
func (ln scalingLine) top(ymax float64) float64 {
	for _, xy := range ln.wall {
		ymax = max(ymax, xy.Y)
	}
	for _, xy := range ln.kernel {
		ymax = max(ymax, xy.Y)
	}
	return ymax
}

// pow2Ticks marks powers of two, labelled 2^k, every few so that at most
// about eight carry a label.
type pow2Ticks struct{}

func (pow2Ticks) Ticks(lo, hi float64) []plot.Tick {
	k0, k1 := int(math.Ceil(math.Log2(lo))), int(math.Floor(math.Log2(hi)))
	step := max(1, (k1-k0+8)/8)
	var ts []plot.Tick
	for k := k0; k <= k1; k++ {
		t := plot.Tick{Value: math.Ldexp(1, k)}
		if k%step == 0 {
			t.Label = fmt.Sprintf("2^%d", k)
		}
		ts = append(ts, t)
	}
	return ts
}

// secondTicks marks powers of ten of seconds with a unit (100 µs, 1 s) and
// the multiples between them as minor ticks; over less than two decades 2
// and 5 times the powers are labelled too.
type secondTicks struct{}

func (secondTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	fine := hi/lo < 100
	for e := int(math.Floor(math.Log10(lo))); e <= int(math.Ceil(math.Log10(hi))); e++ {
		for m := 1; m < 10; m++ {
			v := float64(m) * math.Pow(10, float64(e))
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || fine && (m == 2 || m == 5) {
				t.Label = secondsLabel(m, e)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// secondsLabel writes m x 10^e seconds with a unit: 10 µs, 2 ms, 100 s.
func secondsLabel(m, e int) string {
	units := []string{"ns", "µs", "ms", "s"}
	u := min(max((e+9)/3, 0), 3)
	if e < -9 {
		u = 0
	}
	return fmt.Sprintf("%g %s", float64(m)*math.Pow(10, float64(e-3*(u-3))), units[u])
}
