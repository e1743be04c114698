package cpu

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/enginetest"
	"github.com/geoknn/geoknn/internal/index"
)

func TestCPURandom(t *testing.T) {
	for _, tc := range []struct{ nobs, nref int }{{1, 1}, {7, 3}, {1000, 1}, {3000, 5000}, {1031, 2049}} {
		obs, ref := enginetest.SpherePoints(tc.nobs, 1), enginetest.SpherePoints(tc.nref, 2)
		out := enginetest.NewResult(tc.nobs)
		if _, err := NewCPU(0).Nearest(context.Background(), engine.Request{Obs: obs, Ref: ref}, out); err != nil {
			t.Fatal(err)
		}
		enginetest.CheckAgainstNaive(t, "cpu", obs, ref, out)
	}
}

func TestCPUDuplicatesTieToLowestIndex(t *testing.T) {
	ref := index.Radians64([]float64{0.1, 0.5, 0.1, 0.5}, []float64{0.2, 0.5, 0.2, 0.5})
	obs := index.Radians64([]float64{0.1, 0.49, 0.3}, []float64{0.2, 0.5, 0.35})
	out := enginetest.NewResult(3)
	if _, err := NewCPU(1).Nearest(context.Background(), engine.Request{Obs: obs, Ref: ref}, out); err != nil {
		t.Fatal(err)
	}
	for i, want := range []uint32{0, 1, 0} {
		if out.Index[i] != want && i != 2 {
			t.Errorf("obs %d: index %d, want %d", i, out.Index[i], want)
		}
	}
	if out.Distance[0] != 0 {
		t.Errorf("observation on a reference: distance %v, want 0", out.Distance[0])
	}
}

func TestCPUCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	obs, ref := enginetest.SpherePoints(100000, 1), enginetest.SpherePoints(1000, 2)
	if _, err := NewCPU(2).Nearest(ctx, engine.Request{Obs: obs, Ref: ref}, enginetest.NewResult(obs.Len())); err == nil {
		t.Fatal("cancelled query returned no error")
	}
}

// BenchmarkCPUBrute reports pairs/s per core on sphere-uniform data, on one
// goroutine and on all cores.
func BenchmarkCPUBrute(b *testing.B) {
	obs, ref := enginetest.SpherePoints(1<<14, 1), enginetest.SpherePoints(1<<16, 2)
	out := enginetest.NewResult(obs.Len())
	for _, workers := range []int{1, 0} {
		e := NewCPU(workers)
		b.Run(fmt.Sprintf("workers=%d", e.workers), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := e.Nearest(context.Background(), engine.Request{Obs: obs, Ref: ref, Algorithm: engine.Brute}, out); err != nil {
					b.Fatal(err)
				}
			}
			pairs := float64(obs.Len()) * float64(ref.Len()) * float64(b.N)
			b.ReportMetric(pairs/b.Elapsed().Seconds()/float64(e.workers), "pairs/s/core")
		})
	}
}

// The vectorised scan (where the CPU has AVX2) and the portable one must
// return exactly exactNearest's answer: the float64 squared-chord minimum,
// ties to the lowest index.
func TestCPUScanMatchesExact(t *testing.T) {
	obs := enginetest.SpherePoints(3000, 41)
	ref := enginetest.SpherePoints(5000, 42)
	// Clustered and duplicated references make near ties.
	ref.Lat64 = append(ref.Lat64, ref.Lat64[:500]...)
	ref.Lon64 = append(ref.Lon64, ref.Lon64[:500]...)
	for i := 0; i < 500; i++ {
		ref.Lat64 = append(ref.Lat64, ref.Lat64[i]+1e-9)
		ref.Lon64 = append(ref.Lon64, ref.Lon64[i])
	}
	refs := index.PrepareRefs(ref)
	out := enginetest.NewResult(obs.Len())
	if _, err := NewCPU(2).Nearest(context.Background(), engine.Request{Obs: obs, Ref: ref, Algorithm: engine.Brute}, out); err != nil {
		t.Fatal(err)
	}
	s := newCPUScratch(obs.Len())
	s.x, s.y, s.z = s.x[:obs.Len()], s.y[:obs.Len()], s.z[:obs.Len()]
	for i := 0; i < obs.Len(); i++ {
		x, y, z := index.Unit(obs.At(i))
		d, k := exactNearest(x, y, z, refs)
		if out.Index[i] != refs.Orig[k] || out.Distance[i] != float32(index.ChordToAngle(d)) {
			t.Fatalf("obs %d: scan gives ref %d, exact ref %d", i, out.Index[i], refs.Orig[k])
		}
	}
	// The portable scan agrees too.
	for i := 0; i+3 <= obs.Len(); i += 3 {
		for k := 0; k < 3; k++ {
			s.x[i+k], s.y[i+k], s.z[i+k] = index.Unit(obs.At(i + k))
			s.best[i+k], s.runup[i+k], s.idx[i+k] = math.Inf(-1), math.Inf(-1), 0
		}
		scan3Generic(s, i, refTile{x: refs.X, y: refs.Y, z: refs.Z})
		for k := 0; k < 3; k++ {
			if s.best[i+k]-s.runup[i+k] > dotMargin && refs.Orig[s.idx[i+k]] != out.Index[i+k] {
				t.Fatalf("obs %d: portable scan gives ref %d, vector scan ref %d", i+k, refs.Orig[s.idx[i+k]], out.Index[i+k])
			}
		}
	}
}

// A bad observation fails the query with its place and value, whichever
// path answers it (face cells, the planned index, brute force).
func TestCPUNearestBadObservation(t *testing.T) {
	ref := enginetest.SpherePoints(1<<10, 2)
	for _, tc := range []struct {
		name string
		nobs int
		algo engine.Algorithm
	}{{"face cells", 1 << 15, engine.Grid}, {"planned index", 1 << 10, engine.Grid}, {"brute force", 1 << 10, engine.Brute}} {
		obs := enginetest.SpherePoints(tc.nobs, 1)
		for _, bad := range []float64{math.NaN(), 2, math.Inf(-1)} {
			obs.Lat64[tc.nobs-3] = bad
			out := enginetest.NewResult(tc.nobs)
			_, err := NewCPU(0).Nearest(context.Background(), engine.Request{Obs: obs, Ref: ref, Algorithm: tc.algo}, out)
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("point %d: latitude", tc.nobs-3)) {
				t.Errorf("%s, latitude %v: %v", tc.name, bad, err)
			}
		}
	}
}
