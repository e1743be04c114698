package geoknn

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestBenchKNearestGPU times the k-nearest query of 2^27 generated
// observations against 2^16 references, k = 8, on one GPU and on all,
// three times each into the same result (the first allocates it), then
// once into it page-locked (PinKResult): a benchmark for the GPU machine,
// run when GEOKNN_BENCH_K is set (it needs about 9 GB of host memory). It
// asserts nothing but the answers' shape.
func TestBenchKNearestGPU(t *testing.T) {
	if os.Getenv("GEOKNN_BENCH_K") == "" {
		t.Skip("a GPU benchmark: set GEOKNN_BENCH_K=1 to run it")
	}
	obs, err := Generated(UniformSphere, 1<<27, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := Generated(UniformSphere, 1<<16, 2)
	if err != nil {
		t.Fatal(err)
	}
	res := &KResult{K: 8}
	for _, gpus := range []int{1, 0} {
		s, err := NewSearcher(Options{Engine: GPU, GPUs: gpus})
		if err != nil {
			t.Skipf("no GPU: %v", err)
		}
		for r := range 4 {
			if r == 3 { // the last into the same result, page-locked
				unpin, err := s.PinKResult(res)
				if err != nil {
					t.Fatal(err)
				}
				defer unpin()
			}
			start := time.Now()
			if err := s.KNearestInto(context.Background(), obs, ref, 0, res); err != nil {
				t.Fatal(err)
			}
			st := res.Stats
			t.Logf("GPUs %d (ran on %d), query %d: wall %.3f s; kernels %.1f ms, copy in %.1f ms, out %.1f ms (device time, max over GPUs)",
				gpus, len(st.Devices), r+1, time.Since(start).Seconds(), ms(st.Kernel), ms(st.Upload), ms(st.Download))
		}
		if len(res.Index) != 8<<27 {
			t.Fatalf("%d answers, want %d", len(res.Index), 8<<27)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }

// k-nearest answers copied straight into a page-locked result are the
// answers staged through the engine's own memory, byte for byte.
func TestPinKResultSameAnswers(t *testing.T) {
	s, err := NewSearcher(Options{Engine: GPU})
	if err != nil {
		t.Skipf("no GPU: %v", err)
	}
	defer s.Close()
	obs, ref := hostPoints(t, 1<<21+7, 31), hostPoints(t, 3000, 32) // 40 MB columns: copies cross registered chunks
	want, err := s.KNearest(context.Background(), obs, ref, 5, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := &KResult{K: 5, Index: make([]uint32, 5*obs.Len()), DistanceRad: make([]float32, 5*obs.Len())}
	unpin, err := s.PinKResult(got)
	if err != nil {
		t.Fatal(err)
	}
	defer unpin()
	if err := s.KNearestInto(context.Background(), obs, ref, 0, got); err != nil {
		t.Fatal(err)
	}
	for i := range want.Index {
		if got.Index[i] != want.Index[i] || got.DistanceRad[i] != want.DistanceRad[i] {
			t.Fatalf("entry %d: pinned (%d, %v), staged (%d, %v)", i, got.Index[i], got.DistanceRad[i], want.Index[i], want.DistanceRad[i])
		}
	}
}

// hostPoints is n generated points as float64 columns on the host.
func hostPoints(t *testing.T, n int, seed uint64) Points {
	g, err := Generated(UniformSphere, n, seed)
	if err != nil {
		t.Fatal(err)
	}
	lat, lon := make([]float64, n), make([]float64, n)
	for i := range lat {
		lat[i], lon[i] = g.At(i)
	}
	return Radians64(lat, lon)
}

// TestBenchPlainNearestGPU times 2^24 host observations against 2^16
// references on one GPU through an Index: the plain call (a new result
// each time), the call into a reused result, and the call with the
// observations and the result page-locked, five times each after a
// warm-up, with the engine's account and the host's stages of each: a
// benchmark for the GPU machine, run when GEOKNN_BENCH_PLAIN is set, that
// writes each kind's timeline (a Chrome trace) into the directory
// GEOKNN_BENCH_TRACE names, if set. It asserts nothing.
func TestBenchPlainNearestGPU(t *testing.T) {
	if os.Getenv("GEOKNN_BENCH_PLAIN") == "" {
		t.Skip("a GPU benchmark: set GEOKNN_BENCH_PLAIN=1 to run it")
	}
	ctx := context.Background()
	obs, ref := hostPoints(t, 1<<24, 51), hostPoints(t, 1<<16, 52)
	medians := map[string]time.Duration{}
	for _, kind := range []string{"plain", "reused", "pinned"} {
		tr := NewTrace()
		s, err := NewSearcher(Options{Engine: GPU, GPUs: 1, Trace: tr})
		if err != nil {
			t.Skipf("no GPU: %v", err)
		}
		x, err := s.NewIndex(ref)
		if err != nil {
			t.Fatal(err)
		}
		res := NewResult(obs.Len())
		call := func() (*Result, error) { return res, x.NearestInto(ctx, obs, res) }
		switch kind {
		case "plain":
			call = func() (*Result, error) { return x.Nearest(ctx, obs) }
		case "pinned":
			unpinObs, err := x.Pin(obs)
			if err != nil {
				t.Fatal(err)
			}
			defer unpinObs()
			unpinRes, err := x.PinResult(res)
			if err != nil {
				t.Fatal(err)
			}
			defer unpinRes()
		}
		var walls []time.Duration
		for r := range 6 {
			start := time.Now()
			got, err := call()
			if err != nil {
				t.Fatal(err)
			}
			if r > 0 {
				walls = append(walls, time.Since(start))
			}
			st := got.Stats
			t.Logf("%s %d: wall %.2f ms; engine wall %.2f ms, kernels %.2f ms, copy in %.2f ms, out %.2f ms, %d jobs",
				kind, r, ms(time.Since(start)), ms(st.Wall), ms(st.Kernel), ms(st.Upload), ms(st.Download), st.Jobs)
		}
		for _, stage := range tr.Stages() {
			t.Logf("%s, 6 calls: %-24s %8.2f ms (%d)", kind, stage.Name, ms(stage.Total), stage.Count)
		}
		slices.Sort(walls)
		medians[kind] = walls[len(walls)/2]
		writeBenchTrace(t, tr, "plain-nearest-"+kind+".json")
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// The target: the plain call within 1.5x of the page-locked one.
	t.Logf("median wall of calls 1-5: plain %.2f ms (%.2fx page-locked), reused %.2f ms (%.2fx), page-locked %.2f ms",
		ms(medians["plain"]), float64(medians["plain"])/float64(medians["pinned"]),
		ms(medians["reused"]), float64(medians["reused"])/float64(medians["pinned"]), ms(medians["pinned"]))
}

// writeBenchTrace writes tr into the directory GEOKNN_BENCH_TRACE names
// as file (nothing when it is unset).
func writeBenchTrace(t *testing.T, tr *Trace, file string) {
	dir := os.Getenv("GEOKNN_BENCH_TRACE")
	if dir == "" {
		return
	}
	f, err := os.Create(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(tr.WriteJSON(f), f.Close()); err != nil {
		t.Fatal(err)
	}
}

// TestBenchPlainNeighboursGPU is TestBenchPlainNearestGPU for the other
// query kinds: KNearest (k = 8) and WithinCount (50 km) of 2^24 host
// observations against 2^16 references on one GPU, the plain call (a new
// result each time) against the call with the observations page-locked
// (and, for k nearest, into a page-locked result), five times each after
// a warm-up, when GEOKNN_BENCH_PLAIN is set. It asserts nothing but the
// answers' shape.
func TestBenchPlainNeighboursGPU(t *testing.T) {
	if os.Getenv("GEOKNN_BENCH_PLAIN") == "" {
		t.Skip("a GPU benchmark: set GEOKNN_BENCH_PLAIN=1 to run it")
	}
	ctx := context.Background()
	obs, ref := hostPoints(t, 1<<24, 51), hostPoints(t, 1<<16, 52)
	s, err := NewSearcher(Options{Engine: GPU, GPUs: 1})
	if err != nil {
		t.Skipf("no GPU: %v", err)
	}
	defer s.Close()
	x, err := s.NewIndex(ref)
	if err != nil {
		t.Fatal(err)
	}
	kres := NewKResult(obs.Len(), 8)
	plainK := func() (int, error) {
		r, err := x.KNearest(ctx, obs, 8, 0)
		if err != nil {
			return 0, err
		}
		return len(r.Index), nil
	}
	intoK := func() (int, error) { return len(kres.Index), x.KNearestInto(ctx, obs, 0, kres) }
	within := func() (int, error) {
		r, err := x.WithinCount(ctx, obs, 50_000)
		if err != nil {
			return 0, err
		}
		return len(r.Counts), nil
	}
	plainKWall := benchCalls(t, "k 8, plain", 8<<24, plainK)
	withinWall := benchCalls(t, "within 50 km, plain", 1<<24, within)
	unpinObs, err := x.Pin(obs)
	if err != nil {
		t.Fatal(err)
	}
	defer unpinObs()
	unpinRes, err := s.PinKResult(kres)
	if err != nil {
		t.Fatal(err)
	}
	defer unpinRes()
	pinnedK := benchCalls(t, "k 8, page-locked", 8<<24, intoK)
	pinnedWithin := benchCalls(t, "within 50 km, page-locked", 1<<24, within)
	t.Logf("median wall of calls 1-5: k 8 plain %.2f ms (%.2fx page-locked %.2f ms); within plain %.2f ms (%.2fx page-locked %.2f ms)",
		ms(plainKWall), float64(plainKWall)/float64(pinnedK), ms(pinnedK),
		ms(withinWall), float64(withinWall)/float64(pinnedWithin), ms(pinnedWithin))
}

// benchCalls calls call six times and returns the median wall of calls
// 1-5; call returns how many answers it gave, which must be want.
func benchCalls(t *testing.T, name string, want int, call func() (int, error)) time.Duration {
	t.Helper()
	var walls []time.Duration
	for r := range 6 {
		start := time.Now()
		got, err := call()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got != want {
			t.Fatalf("%s: %d answers, want %d", name, got, want)
		}
		wall := time.Since(start)
		t.Logf("%s %d: wall %.2f ms", name, r, ms(wall))
		if r > 0 {
			walls = append(walls, wall)
		}
	}
	slices.Sort(walls)
	return walls[len(walls)/2]
}
