package cpu

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/sphere"
)

// spherePoints draws n points uniform on the sphere (radians); never zeros.
func spherePoints(n int, seed uint64) index.Points {
	lat, lon := make([]float64, n), make([]float64, n)
	if err := sphere.SphereRadians(n, seed, lat, lon); err != nil {
		panic(err)
	}
	return index.Radians64(lat, lon)
}

// naiveNearest is an independent float64 haversine brute force (lowest index
// on exact ties), the oracle for the engines' tests.
func naiveNearest(obs, ref index.Points) ([]uint32, []float64) {
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

const earthRadius = sphere.EarthRadiusMetres

// checkAgainstNaive fails t for any answer more than 1 m worse than the
// float64 truth or whose distance is off by more than 1 m.
func checkAgainstNaive(t *testing.T, name string, obs, ref index.Points, out engine.Result) {
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

func newResult(n int) engine.Result {
	return engine.Result{Index: make([]uint32, n), Distance: make([]float32, n)}
}

func TestCPURandom(t *testing.T) {
	for _, tc := range []struct{ nobs, nref int }{{1, 1}, {7, 3}, {1000, 1}, {3000, 5000}, {1031, 2049}} {
		obs, ref := spherePoints(tc.nobs, 1), spherePoints(tc.nref, 2)
		out := newResult(tc.nobs)
		if _, err := NewCPU(0).Nearest(context.Background(), engine.Request{Obs: obs, Ref: ref}, out); err != nil {
			t.Fatal(err)
		}
		checkAgainstNaive(t, "cpu", obs, ref, out)
	}
}

func TestCPUDuplicatesTieToLowestIndex(t *testing.T) {
	ref := index.Radians64([]float64{0.1, 0.5, 0.1, 0.5}, []float64{0.2, 0.5, 0.2, 0.5})
	obs := index.Radians64([]float64{0.1, 0.49, 0.3}, []float64{0.2, 0.5, 0.35})
	out := newResult(3)
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
	obs, ref := spherePoints(100000, 1), spherePoints(1000, 2)
	if _, err := NewCPU(2).Nearest(ctx, engine.Request{Obs: obs, Ref: ref}, newResult(obs.Len())); err == nil {
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
	obs := spherePoints(3000, 41)
	ref := spherePoints(5000, 42)
	// Clustered and duplicated references make near ties.
	ref.Lat64 = append(ref.Lat64, ref.Lat64[:500]...)
	ref.Lon64 = append(ref.Lon64, ref.Lon64[:500]...)
	for i := 0; i < 500; i++ {
		ref.Lat64 = append(ref.Lat64, ref.Lat64[i]+1e-9)
		ref.Lon64 = append(ref.Lon64, ref.Lon64[i])
	}
	refs := index.PrepareRefs(ref)
	out := newResult(obs.Len())
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
	ref := spherePoints(1<<10, 2)
	for _, tc := range []struct {
		name string
		nobs int
		algo engine.Algorithm
	}{{"face cells", 1 << 15, engine.Grid}, {"planned index", 1 << 10, engine.Grid}, {"brute force", 1 << 10, engine.Brute}} {
		obs := spherePoints(tc.nobs, 1)
		for _, bad := range []float64{math.NaN(), 2, math.Inf(-1)} {
			obs.Lat64[tc.nobs-3] = bad
			out := newResult(tc.nobs)
			_, err := NewCPU(0).Nearest(context.Background(), engine.Request{Obs: obs, Ref: ref, Algorithm: tc.algo}, out)
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("point %d: latitude", tc.nobs-3)) {
				t.Errorf("%s, latitude %v: %v", tc.name, bad, err)
			}
		}
	}
}
