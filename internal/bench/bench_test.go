package bench

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/cuda"
)

// tinyCPU is a sweep of 2^10 x 2^8 on the CPU, one timed run.
func tinyCPU() Config {
	return Config{
		Shapes:       []Shape{{Obs: []int{1 << 10}, Ref: []int{1 << 8}}},
		Engines:      []string{EngineCPU},
		Algorithms:   []geoknn.Algorithm{geoknn.Brute},
		Generators:   []string{"sphere"},
		Seed:         1,
		Repeat:       1,
		Validate:     256,
		SeedMaxPairs: 1 << 40,
		SeedScale:    true,
		CommandLine:  []string{"knn", "bench", "--test"},
		devices:      noDriver,
	}
}

func noDriver() ([]geoknn.DeviceInfo, int, error) {
	return nil, 0, cuda.ErrNoDriver
}

// The whole path on the CPU: a sweep, its table, a JSON file that reads back
// equal and a PNG that decodes.
func TestSweepCPUEndToEnd(t *testing.T) {
	cfg := tinyCPU()
	cfg.Engines = []string{EngineCPU, EngineGPU} // no GPU: skipped with a note
	cfg.Warmup = 1
	var log bytes.Buffer
	cfg.Log = &log
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Cases) != 1 {
		t.Fatalf("%d cases, want 1: %+v", len(rep.Cases), rep.Cases)
	}
	c := rep.Cases[0]
	if c.Verdict != VerdictOK || c.Validation.Checked != 256 || len(c.Wall) != 1 || len(c.WarmupWall) != 1 {
		t.Errorf("case %+v", c)
	}
	if c.Engine != "cpu" || c.Obs != 1<<10 || c.Ref != 1<<8 || c.Pairs != 1<<18 || c.PairsPerSec <= 0 || c.Kernel != nil {
		t.Errorf("case %+v", c)
	}
	if !strings.Contains(log.String(), "gpu cases skipped") || len(rep.Notes) != 1 {
		t.Errorf("log %q, notes %q: want one note on the skipped gpu cases", log.String(), rep.Notes)
	}
	if rep.Failed() != 0 || rep.Env.GoVersion == "" || rep.Env.Commit == "" || rep.Env.NumCPU < 1 {
		t.Errorf("report %+v", rep.Env)
	}

	dir := t.TempDir()
	js, img := filepath.Join(dir, "b.json"), filepath.Join(dir, "b.png")
	if err := rep.WriteJSON(js); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(js)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rep, back) {
		t.Errorf("JSON round trip differs:\n%#v\n%#v", rep, back)
	}
	if err := rep.Plot(img); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	im, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := im.Bounds(); b.Dx() < 500 || b.Dy() < 300 {
		t.Errorf("plot is %v", b)
	}
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| 1 | cpu | — | brute | sphere | 2^10 | 256 |", "ok (256)", "Legend:",
		"7 FP32 instructions per pair", "gpu cases skipped", "knn bench --test"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md.String())
		}
	}
}

// wrong wraps a searcher and corrupts its answers: every index moves to the
// next reference.
type wrong struct{ searcher }

func (w wrong) Nearest(ctx context.Context, obs, ref geoknn.Points) (*geoknn.Result, error) {
	res, err := w.searcher.Nearest(ctx, obs, ref)
	if err == nil {
		for i := range res.Index {
			res.Index[i] = (res.Index[i] + 1) % uint32(ref.Len())
		}
	}
	return res, err
}

func TestWrongAnswersFail(t *testing.T) {
	cfg := tinyCPU()
	cfg.open = func(o geoknn.Options) (searcher, error) {
		s, err := openSearcher(o)
		return wrong{s}, err
	}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Cases[0]
	if c.Verdict != VerdictFail || c.Validation.IndexWrong == 0 || len(c.Validation.Failures) == 0 || c.Valid() {
		t.Fatalf("case %+v", c)
	}
	if rep.Failed() != 1 || len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "FAIL") {
		t.Errorf("failed %d, notes %q", rep.Failed(), rep.Notes)
	}
	row := rep.Table()
	if !strings.Contains(row, "**FAIL**") || strings.Contains(row, " ms ") || strings.Contains(row, " µs ") {
		t.Errorf("a FAIL row shows times:\n%s", row)
	}
	// Nothing to plot: every case failed.
	if err := rep.WritePNG(&bytes.Buffer{}); err == nil {
		t.Error("plotted a sweep without a valid case")
	}
}

// fakeGPU answers on the CPU but says it ran on the GPU, with kernel times
// set by algorithm: seed at 0.44e12 pairs/s, brute at 4.22e12 pairs/s and
// grid moving 24 B an observation at 1 TB/s; seed's distances are 2 m off.
type fakeGPU struct {
	cpu   searcher
	algo  geoknn.Algorithm
	gpus  int
	calls int
}

func (f *fakeGPU) Nearest(ctx context.Context, obs, ref geoknn.Points) (*geoknn.Result, error) {
	f.calls++
	res, err := f.cpu.Nearest(ctx, obs, ref)
	if err != nil {
		return nil, err
	}
	pairs := float64(obs.Len()) * float64(ref.Len())
	var k float64
	switch f.algo {
	case geoknn.Seed:
		k = pairs / 0.44e12
		for i := range res.DistanceRad {
			res.DistanceRad[i] += float32(2 / geoknn.EarthRadiusMetres)
		}
	case geoknn.Brute:
		k = pairs / 4.22e12
	default:
		k = float64(obs.Len()) * BytesPerObs / 1e12
	}
	k /= float64(f.gpus)
	res.Stats.Engine = "gpu"
	res.Stats.Kernel = time.Duration(k * 1e9)
	return res, nil
}

func (f *fakeGPU) Close() error { return f.cpu.Close() }

func h200s(n int) func() ([]geoknn.DeviceInfo, int, error) {
	return func() ([]geoknn.DeviceInfo, int, error) {
		d := make([]geoknn.DeviceInfo, n)
		for i := range d {
			d[i] = geoknn.DeviceInfo{Ordinal: i, Name: "NVIDIA H200", Multiprocessors: 132, ComputeCapability: [2]int{9, 0},
				ClockMHz: 1980, TotalMemory: 141 << 30, MemoryBusBits: 6016, MemoryClockMHz: 3201}
		}
		return d, 13000, nil
	}
}

func TestFakeGPUDerived(t *testing.T) {
	cfg := tinyCPU()
	cfg.Engines = []string{EngineGPU}
	cfg.GPUs = "1,2,4"
	cfg.Algorithms = []geoknn.Algorithm{geoknn.Seed, geoknn.Brute}
	if grid, err := geoknn.ParseAlgorithm("grid"); err == nil {
		cfg.Algorithms = append(cfg.Algorithms, grid)
	}
	cfg.Shapes = []Shape{{Obs: []int{1 << 12}, Ref: []int{1 << 8}}}
	cfg.SeedMaxPairs = 1 << 19 // seed timed on 2^11 observations, scaled by 2
	cfg.Repeat, cfg.Warmup = 3, 1
	cfg.devices = h200s(2)
	var opened []*fakeGPU
	cfg.open = func(o geoknn.Options) (searcher, error) {
		if o.Engine != geoknn.GPU {
			t.Errorf("options %+v", o)
		}
		cpu, err := openSearcher(geoknn.Options{Engine: geoknn.CPU})
		f := &fakeGPU{cpu: cpu, algo: o.Algorithm, gpus: o.GPUs}
		opened = append(opened, f)
		return f, err
	}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if n := 2 * len(cfg.Algorithms); len(opened) != n || len(rep.Cases) != n {
		t.Fatalf("%d searchers, %d cases; want %d (each algorithm on 1 and 2 GPUs)", len(opened), len(rep.Cases), n)
	}
	for _, f := range opened {
		if f.calls != 4 {
			t.Errorf("%v on %d GPUs: %d queries, want 1 warm-up + 3", f.algo, f.gpus, f.calls)
		}
	}
	if len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "--gpus 4 skipped") {
		t.Errorf("notes %q", rep.Notes)
	}
	if d := rep.Env.Devices[0]; math.Abs(d.MemoryBandwidth-4.8144e12) > 1e9 || d.FP32PeakFLOPS != 2*128*132*1980e6 {
		t.Errorf("device %+v", d)
	}
	// Kernel times are whole nanoseconds: a few hundred here.
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-2*math.Abs(want) }
	for _, c := range rep.Cases {
		switch c.Algorithm {
		case "seed":
			if c.Verdict != VerdictApprox || !c.Scaled() || c.MeasuredObs != 1<<11 || c.Scale != 2 || c.SpeedupWall != 1 {
				t.Errorf("seed %+v", c)
			}
			// Scaled back to 2^12 observations.
			if !near(c.KernelStats.Median, float64(1<<20)/0.44e12/float64(c.GPUs)) {
				t.Errorf("seed kernel %v", c.KernelStats.Median)
			}
		case "brute":
			// 4.22e12 pairs/s x 7 / (132 x 128 x 1.98e9) = 88.3% per GPU.
			if c.Verdict != VerdictOK || !near(c.FP32PeakPct, 88.32) || c.GBps != 0 {
				t.Errorf("brute on %d: %.2f%% of FP32 peak, verdict %s", c.GPUs, c.FP32PeakPct, c.Verdict)
			}
			if !near(c.SpeedupKernel, 4.22/0.44) || c.SpeedupWall <= 0 {
				t.Errorf("brute speed-up over seed %v (kernel), %v (wall)", c.SpeedupKernel, c.SpeedupWall)
			}
		case "grid":
			if !near(c.GBps, 1000*float64(c.GPUs)) || !near(c.BandwidthPct, 100*1e12/4.8144e12) || c.FP32PeakPct != 0 {
				t.Errorf("grid on %d: %v GB/s, %v%%", c.GPUs, c.GBps, c.BandwidthPct)
			}
		}
		if len(c.EngineStats) == 0 || len(c.Kernel) != 3 || c.KernelStats.Median <= 0 {
			t.Errorf("case %+v", c)
		}
	}
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| gpu | 2 | brute |", "88% FP32", "GB/s (20.", "| ~", "approx (", "GPU #1 NVIDIA H200",
		"4.81 TB/s", "timed on 2^11 observations, times ×2", "CUDA driver 13.0"} {
		if strings.Contains(want, "GB/s") && len(cfg.Algorithms) < 3 {
			continue
		}
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md.String())
		}
	}
	var img bytes.Buffer
	if err := rep.WritePNG(&img); err != nil {
		t.Fatal(err)
	}
	im, err := png.Decode(&img)
	if err != nil {
		t.Fatal(err)
	}
	// Time panel and GPU-scaling panel side by side.
	if b := im.Bounds(); b.Dx() < 2*b.Dy() {
		t.Errorf("plot is %v: want two panels", b)
	}
}

func TestSeedSkippedWithoutScaling(t *testing.T) {
	cfg := tinyCPU()
	cfg.Engines = []string{EngineGPU}
	cfg.Algorithms = []geoknn.Algorithm{geoknn.Seed}
	cfg.SeedMaxPairs, cfg.SeedScale = 1000, false
	cfg.devices = h200s(1)
	cfg.open = func(o geoknn.Options) (searcher, error) {
		cpu, err := openSearcher(geoknn.Options{Engine: geoknn.CPU})
		return &fakeGPU{cpu: cpu, algo: o.Algorithm, gpus: 1}, err
	}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Cases) != 0 || len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "--seed-max-pairs") {
		t.Errorf("cases %+v, notes %q", rep.Cases, rep.Notes)
	}
}

func TestOpenFailures(t *testing.T) {
	cfg := tinyCPU()
	cfg.Engines = []string{EngineCPU, EngineGPU}
	cfg.Algorithms = []geoknn.Algorithm{geoknn.Seed, geoknn.Brute}
	cfg.devices = h200s(1)
	cfg.open = func(o geoknn.Options) (searcher, error) {
		if o.Engine == geoknn.GPU {
			return nil, errors.New("out of memory")
		}
		return openSearcher(o)
	}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// cpu seed: skipped (GPU only), cpu brute: ok, gpu seed and brute: ERROR.
	var verdicts []string
	for _, c := range rep.Cases {
		verdicts = append(verdicts, c.Label()+" "+c.Verdict)
	}
	want := []string{"cpu brute ok", "gpu×1 seed ERROR", "gpu×1 brute ERROR"}
	if !reflect.DeepEqual(verdicts, want) || rep.Failed() != 2 {
		t.Errorf("verdicts %q, want %q", verdicts, want)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "cpu seed: skipped") {
		t.Errorf("notes %q", rep.Notes)
	}
	if tab := rep.Table(); !strings.Contains(tab, "**ERROR**: out of memory") {
		t.Errorf("table:\n%s", tab)
	}
}

func TestCities(t *testing.T) {
	cfg := tinyCPU()
	cfg.Generators = []string{GenCities}
	cfg.Shapes = []Shape{{Obs: []int{1000, 2000}, Ref: []int{1 << 8, 1 << 9}}} // ref does not apply
	cfg.CitiesPath = filepath.Join(t.TempDir(), "missing.csv")
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "missing.csv") {
		t.Fatalf("missing cities file: error %v", err)
	}
	cfg.CitiesPath = filepath.Join(t.TempDir(), "cities.csv")
	body := "name,lat,lon\na,48.85,2.35\nb,51.5,-0.12\nc,-33.9,151.2\nd,40.7,-74\ne,35.7,139.7\n"
	if err := os.WriteFile(cfg.CitiesPath, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Cases) != 2 {
		t.Fatalf("%d cases, want 2", len(rep.Cases))
	}
	for _, c := range rep.Cases {
		if c.Ref != 5 || c.Verdict != VerdictOK || c.Generator != GenCities {
			t.Errorf("case %+v", c)
		}
	}
}

func TestCancel(t *testing.T) {
	cfg := tinyCPU()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := Run(ctx, cfg)
	if !errors.Is(err, context.Canceled) || rep == nil {
		t.Errorf("Run on a cancelled context: %v, %v", rep, err)
	}
}

func TestConfigErrors(t *testing.T) {
	for name, mod := range map[string]func(*Config){
		"repeat":  func(c *Config) { c.Repeat = 0 },
		"shapes":  func(c *Config) { c.Shapes = nil },
		"gpus":    func(c *Config) { c.GPUs = "zero" },
		"seedmax": func(c *Config) { c.SeedMaxPairs = 0 },
		"size":    func(c *Config) { c.Shapes[0].Obs = []int{0} },
	} {
		cfg := tinyCPU()
		mod(&cfg)
		if _, err := Run(context.Background(), cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestSummarize(t *testing.T) {
	if s := summarize([]float64{3, 1, 2}, 2); s != (Summary{Median: 4, Min: 2, Max: 6}) {
		t.Errorf("odd: %+v", s)
	}
	if s := summarize([]float64{4, 1, 2, 3}, 1); s != (Summary{Median: 2.5, Min: 1, Max: 4}) {
		t.Errorf("even: %+v", s)
	}
	if s := summarize(nil, 1); s != (Summary{}) {
		t.Errorf("empty: %+v", s)
	}
}

func TestStatsMap(t *testing.T) {
	m := statsMap(geoknn.Stats{Engine: "gpu", Jobs: 3, Kernel: time.Second})
	if m["Engine"] != "gpu" || m["Jobs"] != 3.0 || m["Kernel"] != 1e9 {
		t.Errorf("stats %v", m)
	}
}

type failing struct{}

func (failing) Nearest(context.Context, geoknn.Points, geoknn.Points) (*geoknn.Result, error) {
	return nil, errors.New("CUDA_ERROR_ILLEGAL_ADDRESS")
}
func (failing) Close() error {
	return errors.New("cuMemFree: CUDA_ERROR_ILLEGAL_ADDRESS\ncuMemFree: again")
}

// A failed query is an ERROR row; the searcher's other cases are skipped
// with one note, and a multi-line close error is one note line.
func TestQueryError(t *testing.T) {
	cfg := tinyCPU()
	cfg.Shapes = []Shape{{Obs: []int{1 << 10, 1 << 11, 1 << 12}, Ref: []int{1 << 8}}}
	cfg.open = func(geoknn.Options) (searcher, error) { return failing{}, nil }
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Cases) != 1 || rep.Cases[0].Verdict != VerdictError || rep.Failed() != 1 {
		t.Fatalf("cases %+v", rep.Cases)
	}
	notes := strings.Join(rep.Notes, "\n")
	if len(rep.Notes) != 3 || !strings.Contains(notes, "2 remaining case(s) skipped") || !strings.Contains(notes, "(and 1 more lines)") {
		t.Errorf("notes:\n%s", notes)
	}
}
