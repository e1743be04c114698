package geoknn

import (
	"context"
	"os"
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
