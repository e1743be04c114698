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

func timePlot(title string, cases []*Case, label func(*Case) string, colors map[string]int) (*plot.Plot, error) {
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
	xmin, xmax, ymin, ymax := math.Inf(1), 0.0, math.Inf(1), 0.0
	for _, s := range all {
		col := plotutil.Color(s.color)
		var pts errXYs
		for _, c := range s.points {
			pts.XYs = append(pts.XYs, plotter.XY{X: c.Pairs, Y: c.WallStats.Median})
			pts.lo = append(pts.lo, c.WallStats.Median-c.WallStats.Min)
			pts.hi = append(pts.hi, c.WallStats.Max-c.WallStats.Median)
			xmin, xmax = min(xmin, c.Pairs), max(xmax, c.Pairs)
			ymin, ymax = min(ymin, c.WallStats.Min), max(ymax, c.WallStats.Max)
			if c.KernelStats.Median > 0 {
				ymin = min(ymin, c.KernelStats.Median)
			}
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		sc.Color, sc.Shape, sc.Radius = col, plotutil.Shape(s.color), vg.Points(3)
		eb, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return nil, err
		}
		eb.Color, eb.CapWidth = col, vg.Points(4)
		l, err := plotter.NewLine(geoMeanLine(s.points, func(c *Case) float64 { return c.WallStats.Median }))
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = col, vg.Points(1.5)
		p.Add(l, sc, eb)
		name := s.label + " wall"
		if s.scaled {
			name += " (~ partly scaled)"
		}
		p.Legend.Add(name, l, sc)
		if k := geoMeanLine(s.points, func(c *Case) float64 { return c.KernelStats.Median }); len(k) > 0 {
			kl, err := plotter.NewLine(k)
			if err != nil {
				return nil, err
			}
			kl.Color, kl.Width, kl.Dashes = col, vg.Points(1.5), []vg.Length{vg.Points(5), vg.Points(3)}
			// Markers too: a sweep of one size has no line to dash.
			ks, err := plotter.NewScatter(k)
			if err != nil {
				return nil, err
			}
			ks.Color, ks.Shape, ks.Radius = col, draw.CrossGlyph{}, vg.Points(3)
			p.Add(kl, ks)
			p.Legend.Add(s.label+" kernel", kl, ks)
		}
	}
	p.X.Min, p.X.Max = xmin/1.6, xmax*1.6
	p.Y.Min, p.Y.Max = ymin/2, ymax*4
	return p, nil
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
	type key struct{ algo, gen string }
	type size struct{ obs, ref int }
	byKey := map[key]map[size]map[int]*Case{}
	var keys []key
	for i := range r.Cases {
		c := &r.Cases[i]
		if c.Engine != EngineGPU || !c.Valid() || c.WallStats.Median <= 0 {
			continue
		}
		k := key{c.Algorithm, c.Generator}
		if byKey[k] == nil {
			byKey[k] = map[size]map[int]*Case{}
			keys = append(keys, k)
		}
		sz := size{c.Obs, c.Ref}
		if byKey[k][sz] == nil {
			byKey[k][sz] = map[int]*Case{}
		}
		byKey[k][sz][c.GPUs] = c
	}
	type line struct {
		label        string
		wall, kernel plotter.XYs
	}
	var lines []line
	gmin, gmax := math.MaxInt, 0
	var ticks []int
	for _, k := range keys {
		var best size
		var bestPairs float64
		for sz, m := range byKey[k] {
			if p := float64(sz.obs) * float64(sz.ref); len(m) >= 2 && p > bestPairs {
				best, bestPairs = sz, p
			}
		}
		if bestPairs == 0 {
			continue
		}
		m := byKey[k][best]
		counts := make([]int, 0, len(m))
		for g := range m {
			counts = append(counts, g)
		}
		slices.Sort(counts)
		base := m[counts[0]]
		ln := line{label: fmt.Sprintf("%s %s %s×%s", k.algo, k.gen, FormatCount(best.obs), FormatCount(best.ref))}
		for _, g := range counts {
			c := m[g]
			ln.wall = append(ln.wall, plotter.XY{X: float64(g), Y: base.WallStats.Median / c.WallStats.Median})
			if base.KernelStats.Median > 0 && c.KernelStats.Median > 0 {
				ln.kernel = append(ln.kernel, plotter.XY{X: float64(g), Y: base.KernelStats.Median / c.KernelStats.Median})
			}
			gmin, gmax = min(gmin, g), max(gmax, g)
			if !slices.Contains(ticks, g) {
				ticks = append(ticks, g)
			}
		}
		lines = append(lines, ln)
	}
	if len(lines) == 0 {
		return nil
	}
	p := plot.New()
	p.Title.Text = "speed-up vs GPU count"
	p.X.Label.Text = "GPUs"
	p.Y.Label.Text = fmt.Sprintf("speed-up over %d GPU(s)", gmin)
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	slices.Sort(ticks)
	var ct plot.ConstantTicks
	for _, g := range ticks {
		ct = append(ct, plot.Tick{Value: float64(g), Label: fmt.Sprint(g)})
	}
	p.X.Tick.Marker = ct
	ideal, _ := plotter.NewLine(plotter.XYs{{X: float64(gmin), Y: 1}, {X: float64(gmax), Y: float64(gmax) / float64(gmin)}})
	ideal.Color, ideal.Dashes = color.Gray{Y: 128}, []vg.Length{vg.Points(2), vg.Points(2)}
	p.Add(ideal)
	p.Legend.Add("ideal", ideal)
	ymax := float64(gmax) / float64(gmin)
	for i, ln := range lines {
		col := plotutil.Color(i)
		l, pts, _ := plotter.NewLinePoints(ln.wall)
		l.Color, l.Width = col, vg.Points(1.5)
		pts.Color, pts.Shape, pts.Radius = col, plotutil.Shape(i), vg.Points(3)
		p.Add(l, pts)
		p.Legend.Add(ln.label+" wall", l, pts)
		for _, xy := range ln.wall {
			ymax = max(ymax, xy.Y)
		}
		if len(ln.kernel) > 0 {
			kl, _ := plotter.NewLine(ln.kernel)
			kl.Color, kl.Width, kl.Dashes = col, vg.Points(1.5), []vg.Length{vg.Points(5), vg.Points(3)}
			p.Add(kl)
			p.Legend.Add(ln.label+" kernel", kl)
			for _, xy := range ln.kernel {
				ymax = max(ymax, xy.Y)
			}
		}
	}
	p.X.Min, p.X.Max = float64(gmin)-0.25, float64(gmax)+0.25
	p.Y.Min, p.Y.Max = 0, ymax*1.15
	return p
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
