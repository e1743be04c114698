package cpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/enginetest"
	"github.com/geoknn/geoknn/internal/index"
)

// Grid answers must equal brute force's, index for index, on thousands of
// random small cases that stress the index: poles, the antimeridian,
// duplicates, a single reference, everything in one cell, clusters.
func TestGridMatchesBrute(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 7))
	deg := math.Pi / 180
	gens := []struct {
		name string
		gen  func(n int) index.Points
	}{
		{"sphere", func(n int) index.Points { return enginetest.SpherePoints(n, rng.Uint64()) }},
		{"poles", func(n int) index.Points {
			p := index.Radians64(make([]float64, n), make([]float64, n))
			for i := range p.Lat64 {
				p.Lat64[i] = (90 - rng.Float64()*2) * deg * float64(1-2*(i%2))
				p.Lon64[i] = (rng.Float64()*360 - 180) * deg
			}
			return p
		}},
		{"antimeridian", func(n int) index.Points {
			p := index.Radians64(make([]float64, n), make([]float64, n))
			for i := range p.Lat64 {
				p.Lat64[i] = (rng.Float64()*20 - 10) * deg
				p.Lon64[i] = (180 - rng.Float64()*0.5) * deg * float64(1-2*(i%2))
				if i%7 == 0 {
					p.Lon64[i] = math.Pi * float64(1-2*(i%2))
				}
			}
			return p
		}},
		{"one cell", func(n int) index.Points {
			p := index.Radians64(make([]float64, n), make([]float64, n))
			for i := range p.Lat64 {
				p.Lat64[i] = (45 + rng.Float64()*1e-3) * deg
				p.Lon64[i] = (7 + rng.Float64()*1e-3) * deg
			}
			return p
		}},
		{"clusters", func(n int) index.Points {
			p := enginetest.SpherePoints(n, rng.Uint64())
			c := enginetest.SpherePoints(3, rng.Uint64())
			for i := range p.Lat64 {
				k := i % 3
				p.Lat64[i] = math.Max(-math.Pi/2, math.Min(math.Pi/2, c.Lat64[k]+rng.NormFloat64()*0.01))
				p.Lon64[i] = math.Remainder(c.Lon64[k]+rng.NormFloat64()*0.01, 2*math.Pi)
			}
			return p
		}},
	}
	cases := 0
	for trial := 0; trial < 400; trial++ {
		og, rg := gens[trial%len(gens)], gens[(trial/len(gens))%len(gens)]
		nobs, nref := 1+rng.IntN(300), 1+rng.IntN(400)
		obs, ref := og.gen(nobs), rg.gen(nref)
		if trial%9 == 0 { // duplicates
			ref.Lat64 = append(ref.Lat64, ref.Lat64...)
			ref.Lon64 = append(ref.Lon64, ref.Lon64...)
		}
		if trial%11 == 0 { // observations on references
			obs = ref
		}
		want := enginetest.NewResult(obs.Len())
		e := NewCPU(1)
		if _, err := e.Nearest(context.Background(), engine.Request{Obs: obs, Ref: ref, Algorithm: engine.Brute}, want); err != nil {
			t.Fatal(err)
		}
		refs := index.PrepareRefs(ref)
		tree := index.BuildKDTree(refs)
		for i := 0; i < obs.Len(); i++ {
			x, y, z := index.Unit(obs.At(i))
			d, k := tree.Nearest(x, y, z, nil)
			if refs.Orig[k] != want.Index[i] || float32(index.ChordToAngle(d)) != want.Distance[i] {
				t.Fatalf("%s obs x %s ref, trial %d, k-d tree: obs %d: ref %d (%v), brute ref %d (%v)",
					og.name, rg.name, trial, i, refs.Orig[k], index.ChordToAngle(d), want.Index[i], want.Distance[i])
			}
		}
		for _, g := range []int{1, 2, 5, index.GridSide(refs.N, 2), 40, -index.GridSide(refs.N, 2), -3, -17} {
			var ix *index.GridIndex
			if g < 0 { // the fitted grid of side -g
				g = -g
				ix = index.BuildFittedGrid(refs, g)
			} else {
				ix = index.BuildGrid(refs, g)
			}
			for i := 0; i < obs.Len(); i++ {
				x, y, z := index.Unit(obs.At(i))
				d, k := ix.Nearest(x, y, z, nil)
				if refs.Orig[k] != want.Index[i] || float32(index.ChordToAngle(d)) != want.Distance[i] {
					t.Fatalf("%s obs x %s ref, trial %d, grid %d (fitted %v): obs %d: grid ref %d (%v), brute ref %d (%v)",
						og.name, rg.name, trial, g, ix.Fitted, i, refs.Orig[k], index.ChordToAngle(d), want.Index[i], want.Distance[i])
				}
				cases++
			}
			got := cellOrderAnswer(t, obs, ix, refs)
			for i := range want.Index {
				if got.Index[i] != want.Index[i] || got.Distance[i] != want.Distance[i] {
					t.Fatalf("%s obs x %s ref, trial %d, grid %d (fitted %v), in cell order: obs %d: ref %d (%v), brute ref %d (%v)",
						og.name, rg.name, trial, g, ix.Fitted, i, got.Index[i], got.Distance[i], want.Index[i], want.Distance[i])
				}
			}
		}
	}
	t.Logf("%d grid queries agreed with brute force, walked one by one and in cell order", cases)
}

// cellOrderAnswer answers obs through ix in cell order, as one chunk on two
// goroutines.
func cellOrderAnswer(t *testing.T, obs index.Points, ix *index.GridIndex, refs *index.RefSet) engine.Result {
	t.Helper()
	out := enginetest.NewResult(obs.Len())
	co := newCellOrder(obs.Len(), ix.G*ix.G)
	co.prepare(obs, 0, obs.Len(), ix, 2)
	if err := co.answer(context.Background(), 0, ix, refs, out, 2); err != nil {
		t.Fatal(err)
	}
	return out
}

// The AVX2 lane kernel leaves the state the Go loop does, bit for bit, and a
// tile padded with NaN references ranks as the tile without them.
func TestLanes3MatchGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 300; trial++ {
		n := rng.IntN(70)
		refs := enginetest.SpherePoints(n, rng.Uint64())
		rs := index.PrepareRefs(refs)
		if trial%5 == 0 && n > 2 { // exact ties
			rs.X[1], rs.Y[1], rs.Z[1] = rs.X[0], rs.Y[0], rs.Z[0]
		}
		tile := refTile{x: rs.X[:n], y: rs.Y[:n], z: rs.Z[:n]}
		obs := index.PrepareRefs(enginetest.SpherePoints(3, rng.Uint64()))
		o := [9]float64{obs.X[0], obs.Y[0], obs.Z[0], obs.X[1], obs.Y[1], obs.Z[1], obs.X[2], obs.Y[2], obs.Z[2]}
		var want, got, padded lanes3
		want.reset()
		rankLanes3From(&want, &o, tile, 0)
		rankLanes3(&got, &o, tile)
		if got != want {
			t.Fatalf("trial %d, %d references: kernel %+v, Go %+v", trial, n, got, want)
		}
		for len(tile.x)%4 != 0 {
			tile.x, tile.y, tile.z = append(tile.x, math.NaN()), append(tile.y, math.NaN()), append(tile.z, math.NaN())
		}
		if !index.HaveAVX2FMA {
			continue // NaN padding is only for the kernel
		}
		rankLanes3(&padded, &o, tile)
		for k := range 3 {
			b0, r0, i0 := want.result(k)
			b1, r1, i1 := padded.result(k)
			if b0 != b1 || r0 != r1 || i0 != i1 {
				t.Fatalf("trial %d, observation %d: padded (%v %v %d), plain (%v %v %d)", trial, k, b1, r1, i1, b0, r0, i0)
			}
		}
	}
}

func TestCPUGridEngine(t *testing.T) {
	for _, tc := range []struct{ nobs, nref int }{{5000, 70000}, {20000, 1}, {3000, 3000}} {
		obs, ref := enginetest.SpherePoints(tc.nobs, 31), enginetest.SpherePoints(tc.nref, 32)
		want, got := enginetest.NewResult(tc.nobs), enginetest.NewResult(tc.nobs)
		if _, err := NewCPU(0).Nearest(context.Background(), engine.Request{Obs: obs, Ref: ref, Algorithm: engine.Brute}, want); err != nil {
			t.Fatal(err)
		}
		st, err := NewCPU(0).Nearest(context.Background(), engine.Request{Obs: obs, Ref: ref, Algorithm: engine.Grid}, got)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d x %d: %s", tc.nobs, tc.nref, st.Note)
		for i := range want.Index {
			if want.Index[i] != got.Index[i] || want.Distance[i] != got.Distance[i] {
				t.Fatalf("obs %d: grid %d, brute %d", i, got.Index[i], want.Index[i])
			}
		}
	}
}

// An engine keeps a query's memory for the next: queries of other sizes,
// with duplicates and without, through face cells and not, answer as a
// fresh engine's do.
func TestCPUReusesMemory(t *testing.T) {
	plain := enginetest.SpherePoints(3000, 41)
	dups := index.Radians64(append(slices.Clone(plain.Lat64[:1000]), plain.Lat64[:200]...),
		append(slices.Clone(plain.Lon64[:1000]), plain.Lon64[:200]...))
	rng := rand.New(rand.NewPCG(44, 45))
	crowd := index.Radians64(make([]float64, 18000), make([]float64, 18000)) // the tree before the first level
	for i := range crowd.Lat64 {
		crowd.Lat64[i], crowd.Lon64[i] = 0.7+0.05*rng.NormFloat64(), 1.1+0.05*rng.NormFloat64()
	}
	e := NewCPU(3)
	for q, tc := range []struct {
		obs int
		ref index.Points
	}{{1 << 15, plain}, {1 << 15, dups}, {1 << 16, enginetest.SpherePoints(5000, 42)}, {1 << 14, enginetest.SpherePoints(900, 43)}, {500, plain},
		{1 << 18, northern(enginetest.SpherePoints(20000, 46))}, {1 << 18, crowd}, {1 << 15, northern(enginetest.SpherePoints(3000, 47))}, {1 << 15, plain}} {
		obs := enginetest.SpherePoints(tc.obs, uint64(50+q))
		want, got := enginetest.NewResult(tc.obs), enginetest.NewResult(tc.obs)
		req := engine.Request{Obs: obs, Ref: tc.ref, Algorithm: engine.Grid}
		if _, err := NewCPU(3).Nearest(context.Background(), req, want); err != nil {
			t.Fatal(err)
		}
		st, err := e.Nearest(context.Background(), req, got)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Index, want.Index) || !slices.Equal(got.Distance, want.Distance) {
			t.Fatalf("query %d (%d x %d, %s): the reused engine's answers differ", q, tc.obs, tc.ref.Len(), st.Note)
		}
		t.Logf("query %d: %s", q, st.Note)
	}
}

// All references in one tiny cluster (about 600 m): on the GPU's global
// grid they share a cell, so both engines plan a k-d tree (the GPU's
// sessions, which take no tree, fall back to brute force), and the CPU's
// answers are brute force's (TestGPUTree checks the GPU's).
func TestGridFallsBackWhenSkewed(t *testing.T) {
	ref := index.Radians64(make([]float64, 20000), make([]float64, 20000))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range ref.Lat64 {
		ref.Lat64[i], ref.Lon64[i] = 0.3+rng.Float64()*1e-4, 0.2+rng.Float64()*1e-4
	}
	obs := enginetest.SpherePoints(20000, 3)
	if plan := index.PlanGrid(obs, index.PrepareRefs(ref), index.GPUSessionGridCost, 0, nil); plan.Index != nil || plan.Tree != nil {
		t.Errorf("GPU session plan kept the grid (%v) or planned a tree (%v)", plan.Index != nil, plan.Tree != nil)
	}
	if plan := index.PlanGrid(obs, index.PrepareRefs(ref), index.GPUGridCost, 0, nil); plan.Tree == nil {
		t.Errorf("GPU plan: no k-d tree (grid %v: %s)", plan.Index != nil, plan.Reason)
	}
	plan := index.PlanGrid(obs, index.PrepareRefs(ref), index.CPUGridCost, 0, nil)
	if plan.Tree == nil {
		t.Fatalf("CPU plan: no k-d tree (grid %v: %s)", plan.Index != nil, plan.Reason)
	}
	want, got := enginetest.NewResult(obs.Len()), enginetest.NewResult(obs.Len())
	if _, err := NewCPU(0).Nearest(context.Background(), engine.Request{Obs: obs, Ref: ref, Algorithm: engine.Brute}, want); err != nil {
		t.Fatal(err)
	}
	st, err := NewCPU(0).Nearest(context.Background(), engine.Request{Obs: obs, Ref: ref, Algorithm: engine.Grid}, got)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(st.Note)
	for i := range want.Index {
		if want.Index[i] != got.Index[i] || want.Distance[i] != got.Distance[i] {
			t.Fatalf("obs %d: k-d tree %d, brute %d", i, got.Index[i], want.Index[i])
		}
	}
}

// BenchmarkCPUGrid reports observations/s for sphere-uniform data, index
// build included.
func BenchmarkCPUGrid(b *testing.B) {
	for _, tc := range []struct{ nobs, nref int }{{1 << 20, 1 << 16}, {1 << 22, 1 << 16}} {
		obs, ref := enginetest.SpherePoints(tc.nobs, 1), enginetest.SpherePoints(tc.nref, 2)
		out := enginetest.NewResult(obs.Len())
		e := NewCPU(0)
		b.Run(fmt.Sprintf("obs=%d/ref=%d", tc.nobs, tc.nref), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := e.Nearest(context.Background(), engine.Request{Obs: obs, Ref: ref, Algorithm: engine.Grid}, out); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(obs.Len())*float64(b.N)/b.Elapsed().Seconds(), "obs/s")
		})
	}
}

// A cancelled query in cell order stops with the context's error.
func TestCellOrderCancelled(t *testing.T) {
	obs, refs := enginetest.SpherePoints(1<<15, 4), index.PrepareRefs(enginetest.SpherePoints(1<<10, 5))
	ix := index.BuildFittedGrid(refs, 12)
	co := newCellOrder(obs.Len(), ix.G*ix.G)
	co.prepare(obs, 0, obs.Len(), ix, 4)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := co.answer(ctx, 0, ix, refs, enginetest.NewResult(obs.Len()), 4); err != context.Canceled {
		t.Errorf("answer on a cancelled context: %v", err)
	}
}
