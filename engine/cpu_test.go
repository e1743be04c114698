package engine

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// spherePoints draws n points uniform on the sphere (radians); never zeros.
func spherePoints(n int, seed uint64) Points {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	lat, lon := make([]float64, n), make([]float64, n)
	for i := range lat {
		lat[i] = math.Asin(2*r.Float64() - 1)
		lon[i] = (2*r.Float64() - 1) * math.Pi
	}
	return Radians64(lat, lon)
}

// naiveNearest is an independent float64 haversine brute force (lowest index
// on exact ties), the oracle for the engines' tests.
func naiveNearest(obs, ref Points) ([]uint32, []float64) {
	idx := make([]uint32, obs.Len())
	dist := make([]float64, obs.Len())
	for i := range idx {
		la, lo := obs.At(i)
		best := math.Inf(1)
		for j := 0; j < ref.Len(); j++ {
			lb, lob := ref.At(j)
			s1, s2 := math.Sin((lb-la)/2), math.Sin((lob-lo)/2)
			h := s1*s1 + math.Cos(la)*math.Cos(lb)*s2*s2
			d := 2 * math.Asin(math.Sqrt(math.Min(1, h)))
			if d < best {
				best, idx[i] = d, uint32(j)
			}
		}
		dist[i] = best
	}
	return idx, dist
}

const earthRadius = 6371008.8

// checkAgainstNaive fails t for any answer more than 1 m worse than the
// float64 truth or whose distance is off by more than 1 m.
func checkAgainstNaive(t *testing.T, name string, obs, ref Points, out Result) {
	t.Helper()
	want, wantDist := naiveNearest(obs, ref)
	bad := 0
	for i := range want {
		la, lo := obs.At(i)
		lb, lob := ref.At(int(out.Index[i]))
		s1, s2 := math.Sin((lb-la)/2), math.Sin((lob-lo)/2)
		got := 2 * math.Asin(math.Sqrt(math.Min(1, s1*s1+math.Cos(la)*math.Cos(lb)*s2*s2)))
		if (got-wantDist[i])*earthRadius > 1 || math.Abs(float64(out.Distance[i])-got)*earthRadius > 1 {
			if bad < 5 {
				t.Errorf("%s: obs %d: got ref %d at %.3f m (reported %.3f m), want ref %d at %.3f m", name, i,
					out.Index[i], got*earthRadius, float64(out.Distance[i])*earthRadius, want[i], wantDist[i]*earthRadius)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d answers wrong", name, bad, len(want))
	}
}

func newResult(n int) Result {
	return Result{Index: make([]uint32, n), Distance: make([]float32, n)}
}

func TestCPURandom(t *testing.T) {
	for _, tc := range []struct{ nobs, nref int }{{1, 1}, {7, 3}, {1000, 1}, {3000, 5000}, {1031, 2049}} {
		obs, ref := spherePoints(tc.nobs, 1), spherePoints(tc.nref, 2)
		out := newResult(tc.nobs)
		if _, err := NewCPU(0).Nearest(context.Background(), Request{Obs: obs, Ref: ref}, out); err != nil {
			t.Fatal(err)
		}
		checkAgainstNaive(t, "cpu", obs, ref, out)
	}
}

func TestCPUDuplicatesTieToLowestIndex(t *testing.T) {
	ref := Radians64([]float64{0.1, 0.5, 0.1, 0.5}, []float64{0.2, 0.5, 0.2, 0.5})
	obs := Radians64([]float64{0.1, 0.49, 0.3}, []float64{0.2, 0.5, 0.35})
	out := newResult(3)
	if _, err := NewCPU(1).Nearest(context.Background(), Request{Obs: obs, Ref: ref}, out); err != nil {
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
	obs, ref := spherePoints(100000, 1), spherePoints(1000, 2)
	if _, err := NewCPU(2).Nearest(ctx, Request{Obs: obs, Ref: ref}, newResult(obs.Len())); err == nil {
		t.Fatal("cancelled query returned no error")
	}
}

// BenchmarkCPUBrute reports pairs/s per core on sphere-uniform data, on one
// goroutine and on all cores.
func BenchmarkCPUBrute(b *testing.B) {
	obs, ref := spherePoints(1<<14, 1), spherePoints(1<<16, 2)
	out := newResult(obs.Len())
	for _, workers := range []int{1, 0} {
		e := NewCPU(workers)
		b.Run(fmt.Sprintf("workers=%d", e.workers), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := e.Nearest(context.Background(), Request{Obs: obs, Ref: ref, Algorithm: Brute}, out); err != nil {
					b.Fatal(err)
				}
			}
			pairs := float64(obs.Len()) * float64(ref.Len()) * float64(b.N)
			b.ReportMetric(pairs/b.Elapsed().Seconds()/float64(e.workers), "pairs/s/core")
		})
	}
}
