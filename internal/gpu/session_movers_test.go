package gpu

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/geoknn/geoknn/internal/cpu"
	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/enginetest"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/kernels"
	"github.com/geoknn/geoknn/sphere"
)

// hostWorld is the simulation a movers session must reproduce, made here
// with the Go functions alone.
type hostWorld struct {
	obs index.Points
	mv  engine.Movers
}

func newHostWorld(obs index.Points, nref int) hostWorld {
	ref := enginetest.SpherePoints(nref, 41)
	rng := rand.New(rand.NewPCG(4, 5))
	mv := engine.Movers{Lat: ref.Lat64, Lon: ref.Lon64, Heading: make([]float64, nref), Speed: make([]float64, nref)}
	for i := range nref {
		mv.Heading[i], mv.Speed[i] = 2*math.Pi*rng.Float64(), 300*rng.Float64()
	}
	// Edge movers: on a pole, on the antimeridian heading across it,
	// standing still, and two twins (the lower index must win).
	mv.Lat[0], mv.Heading[0] = math.Pi/2, 1
	mv.Lon[1], mv.Heading[1], mv.Speed[1] = math.Pi, math.Pi/2, 250
	mv.Speed[2] = 0
	mv.Lat[4], mv.Lon[4], mv.Heading[4], mv.Speed[4] = mv.Lat[3], mv.Lon[3], mv.Heading[3], mv.Speed[3]
	return hostWorld{obs: clonePoints(obs), mv: engine.Movers{Lat: slices.Clone(mv.Lat), Lon: slices.Clone(mv.Lon),
		Heading: slices.Clone(mv.Heading), Speed: slices.Clone(mv.Speed)}}
}

func (w *hostWorld) advance(a engine.Advance) {
	m := w.mv
	for i := range m.Lat {
		m.Lat[i], m.Lon[i], m.Heading[i] = sphere.Propagate(m.Lat[i], m.Lon[i], m.Heading[i], float64(m.Speed[i]*a.Dt))
	}
	n, rep := w.obs.Len(), a.Replacement()
	set := make([]uint64, sphere.ReplaceBlockSize/64)
	for b := range sphere.Blocks(n) {
		first, slots := rep.BlockSlots(b, n, set, nil)
		for j, i := range slots {
			lat, lon := rep.PointAt(first + j)
			if w.obs.Is32() {
				w.obs.Lat32[i], w.obs.Lon32[i] = float32(lat), float32(lon)
			} else {
				w.obs.Lat64[i], w.obs.Lon64[i] = lat, lon
			}
		}
	}
}

// moverSteps runs a simulation inside a session of eng and checks, every
// step, the positions (to the bit) and the answers against the host's.
func moverSteps(t *testing.T, eng engine.Engine, obs index.Points, algo engine.Algorithm) {
	t.Helper()
	ctx := context.Background()
	w := newHostWorld(obs, 5000)
	s, err := eng.NewSession(obs, engine.SessionOptions{Algorithm: algo, Replan: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.StartMovers(ctx, engine.Result{}); err == nil {
		t.Error("StartMovers before SetMovers: no error")
	}
	if err := s.SetMovers(ctx, w.mv); err != nil {
		t.Fatal(err)
	}
	n := obs.Len()
	for step := 1; step <= 8; step++ {
		if step > 1 {
			a := engine.Advance{Dt: 900, Fraction: 0.01, Seed: 9, Step: uint64(step), Gen: index.GenKind(step % 2)}
			if step == 5 {
				a.Fraction = 0.4
			}
			if err := s.Advance(ctx, a); err != nil {
				t.Fatal(err)
			}
			w.advance(a)
		}
		if step == 6 {
			// A query against other references between two against the
			// movers: theirs must come back.
			if _, err := s.Nearest(ctx, enginetest.SpherePoints(700, 3), engine.Result{}); err != nil {
				t.Fatal(err)
			}
		}
		got := enginetest.NewResult(n)
		q, err := s.StartMovers(ctx, got)
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if _, err := q.Wait(); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		checkMoverPositions(t, s, step, w)
		ref := index.Radians64(w.mv.Lat, w.mv.Lon)
		want := enginetest.NewResult(n)
		if _, err := cpu.NewCPU(0).Nearest(ctx, engine.Request{Obs: w.obs, Ref: ref, Algorithm: engine.Brute}, want); err != nil {
			t.Fatal(err)
		}
		compareResults(t, w.obs, ref, want, got)
	}
}

func checkMoverPositions(t *testing.T, s engine.Session, step int, w hostWorld) {
	t.Helper()
	n, m := w.obs.Len(), w.mv.Len()
	lat, lon, rlat, rlon := make([]float64, n), make([]float64, n), make([]float64, m), make([]float64, m)
	if err := s.Positions(context.Background(), lat, lon, rlat, rlon); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		a, b := w.obs.At(i)
		if lat[i] != a || lon[i] != b {
			t.Fatalf("step %d: observation %d at (%v, %v), host (%v, %v)", step, i, lat[i], lon[i], a, b)
		}
	}
	if !slices.Equal(rlat, w.mv.Lat) || !slices.Equal(rlon, w.mv.Lon) {
		for i := range m {
			if rlat[i] != w.mv.Lat[i] || rlon[i] != w.mv.Lon[i] {
				t.Fatalf("step %d: mover %d at (%v, %v), host (%v, %v)", step, i, rlat[i], rlon[i], w.mv.Lat[i], w.mv.Lon[i])
			}
		}
	}
}

func TestCPUSessionMovers(t *testing.T) {
	for _, algo := range []engine.Algorithm{engine.Grid, engine.Brute} {
		t.Run(algo.String(), func(t *testing.T) { moverSteps(t, cpu.NewCPU(0), enginetest.SpherePoints(30011, 5), algo) })
	}
}

func TestGPUSessionMovers(t *testing.T) {
	g := openGPU(t, DeviceMemory)
	p := enginetest.SpherePoints(1<<17+5, 6)
	for _, tc := range []struct {
		name string
		obs  index.Points
	}{{"float64", enginetest.SpherePoints(1<<18+3, 5)}, {"float32", points32(p)}} {
		for _, algo := range []engine.Algorithm{engine.Grid, engine.Brute} {
			t.Run(tc.name+"/"+algo.String(), func(t *testing.T) { moverSteps(t, g, tc.obs, algo) })
		}
	}
}

func TestSessionMoversRejectBadInput(t *testing.T) {
	ctx := context.Background()
	s, err := cpu.NewCPU(1).NewSession(enginetest.SpherePoints(100, 1), engine.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	good := engine.Movers{Lat: []float64{0}, Lon: []float64{0}, Heading: []float64{0}, Speed: []float64{10}}
	for name, m := range map[string]engine.Movers{
		"empty":          {},
		"short column":   {Lat: []float64{0}, Lon: []float64{0}, Heading: []float64{0}},
		"bad latitude":   {Lat: []float64{2}, Lon: []float64{0}, Heading: []float64{0}, Speed: []float64{1}},
		"NaN heading":    {Lat: []float64{0}, Lon: []float64{0}, Heading: []float64{math.NaN()}, Speed: []float64{1}},
		"negative speed": {Lat: []float64{0}, Lon: []float64{0}, Heading: []float64{0}, Speed: []float64{-1}},
	} {
		if err := s.SetMovers(ctx, m); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if err := s.Advance(ctx, engine.Advance{Dt: 1}); err == nil {
		t.Error("Advance without movers: no error")
	}
	if err := s.SetMovers(ctx, good); err != nil {
		t.Fatal(err)
	}
	for name, a := range map[string]engine.Advance{
		"NaN step":       {Dt: math.NaN()},
		"fraction above": {Fraction: 1.5},
		"too far":        {Dt: 1e300},
		"generator":      {Fraction: 0.1, Gen: index.GenKind(7)},
	} {
		if err := s.Advance(ctx, a); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if err := s.Positions(ctx, make([]float64, 3), make([]float64, 3), nil, nil); err == nil {
		t.Error("Positions with short columns: no error")
	}
}

// The device's motion model and trigonometry are the Go functions' twins
// to the bit, poles and antimeridian included.
func TestGPUTwins(t *testing.T) {
	g := openGPU(t, DeviceMemory)
	d := g.devs[0]
	rng := rand.New(rand.NewPCG(8, 9))
	in := []float64{math.Pi / 2, 0, 1, 1e5, -math.Pi / 2, math.Pi, 0, 2e7, 0, -math.Pi, math.Pi / 2, 0, 0.3, 0.2, -2, -5e6,
		0, 0, 0, 1e-9, 1e-200, 3, math.Pi, 12345}
	for range 1 << 16 {
		in = append(in, math.Asin(2*rng.Float64()-1), math.Pi*(2*rng.Float64()-1), 2*math.Pi*rng.Float64(), 1e6*(rng.Float64()-0.5))
	}
	n := len(in) / 4
	out := make([]float64, 6*n)
	err := d.onThread(func() error {
		var din, dout buffer
		defer din.free(d.drv)
		defer dout.free(d.drv)
		if err := ensureAll(d.drv, []alloc{{buf: &din, bytes: 8 * len(in)}, {buf: &dout, bytes: 8 * len(out)}}, 0); err != nil {
			return err
		}
		if err := copyToDevice(d.drv, &din, in); err != nil {
			return err
		}
		if err := d.drv.Synchronize(); err != nil {
			return err
		}
		if err := d.move.runTwin(d.drv, 0, n, din.ptr, dout.ptr); err != nil {
			return err
		}
		if err := d.drv.Synchronize(); err != nil {
			return err
		}
		return copyFromDevice(d.drv, out, &dout)
	})
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i := range n {
		a, b, c, dist := in[4*i], in[4*i+1], in[4*i+2], in[4*i+3]
		x, y, z := sphere.UnitVector(a, b)
		la, lo, h := sphere.Propagate(a, b, c, dist)
		want := []float64{x, y, z, la, lo, h}
		for k, v := range want {
			if math.Float64bits(v) != math.Float64bits(out[6*i+k]) {
				if bad < 5 {
					t.Errorf("input %d (%v, %v, %v, %v), output %d: device %v, Go %v", i, a, b, c, dist, k, out[6*i+k], v)
				}
				bad++
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d values differ", bad, 6*n)
	}
}

func TestReplaceBlockMatchesKernel(t *testing.T) {
	if kernels.ReplaceBlock != sphere.ReplaceBlockSize {
		t.Errorf("resident.cu REPLACE_BLOCK %d, sphere.ReplaceBlockSize %d", kernels.ReplaceBlock, sphere.ReplaceBlockSize)
	}
}

// clone copies p's columns.
func clonePoints(p index.Points) index.Points {
	if p.Is32() {
		return index.Radians32(slices.Clone(p.Lat32), slices.Clone(p.Lon32))
	}
	lat, lon := make([]float64, p.Len()), make([]float64, p.Len())
	for i := range lat {
		lat[i], lon[i] = p.At(i)
	}
	return index.Radians64(lat, lon)
}

// References prepared once (an Index's) stay on the GPU between queries
// and give the answers of references prepared afresh.
func TestGPUPreparedStaysOnDevice(t *testing.T) {
	g := openGPU(t, DeviceMemory)
	ctx := context.Background()
	ref := enginetest.SpherePoints(20000, 3)
	ref.Lat64 = append(ref.Lat64, ref.Lat64[:50]...) // duplicates: merged for nearest, kept for k nearest
	ref.Lon64 = append(ref.Lon64, ref.Lon64[:50]...)
	x, err := cpu.NewCPUIndex(ref)
	if err != nil {
		t.Fatal(err)
	}
	prep := x.Prepared()
	obs := enginetest.SpherePoints(300000, 4)
	for _, algo := range []engine.Algorithm{engine.Grid, engine.Brute} {
		want := enginetest.NewResult(obs.Len())
		if _, err := cpu.NewCPU(0).Nearest(ctx, engine.Request{Obs: obs, Ref: ref, Algorithm: algo}, want); err != nil {
			t.Fatal(err)
		}
		for round := range 2 {
			got := enginetest.NewResult(obs.Len())
			if _, err := g.Nearest(ctx, engine.Request{Obs: obs, Ref: ref, Algorithm: algo, Prepared: prep}, got); err != nil {
				t.Fatal(err)
			}
			compareResults(t, obs, ref, want, got)
			if d := g.devs[0]; d.refs.from != prep.Merged {
				t.Errorf("%v, round %d: the device does not hold the prepared references", algo, round)
			}
		}
		kwant := engine.KResult{K: 5, Index: make([]uint32, 5*obs.Len()), Distance: make([]float32, 5*obs.Len())}
		kgot := engine.KResult{K: 5, Index: make([]uint32, 5*obs.Len()), Distance: make([]float32, 5*obs.Len())}
		if _, err := g.KNearest(ctx, engine.Request{Obs: obs, Ref: ref, Algorithm: algo}, math.Inf(1), kwant); err != nil {
			t.Fatal(err)
		}
		if _, err := g.KNearest(ctx, engine.Request{Obs: obs, Ref: ref, Algorithm: algo, Prepared: prep}, math.Inf(1), kgot); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(kwant.Index, kgot.Index) || !slices.Equal(kwant.Distance, kgot.Distance) {
			t.Errorf("%v: k nearest against the prepared references differ", algo)
		}
		// The k nearest may have built the grid index in another shape: the
		// nearest query's kept index must follow it, not be taken as built.
		got := enginetest.NewResult(obs.Len())
		if _, err := g.Nearest(ctx, engine.Request{Obs: obs, Ref: ref, Algorithm: algo, Prepared: prep}, got); err != nil {
			t.Fatal(err)
		}
		compareResults(t, obs, ref, want, got)
		if d := g.devs[0]; algo == engine.Grid && d.refs.built.grid.G == 0 {
			t.Errorf("the grid index over the prepared references is not marked as built")
		}
		// Other references in between: the prepared ones are sent again.
		if _, err := g.Nearest(ctx, engine.Request{Obs: obs, Ref: enginetest.SpherePoints(100, 5), Algorithm: algo}, enginetest.NewResult(obs.Len())); err != nil {
			t.Fatal(err)
		}
		if g.devs[0].refs.from != nil {
			t.Errorf("%v: a query against other references left the prepared mark", algo)
		}
	}
}

// 2^20 observations against 2^16 references prepared afresh every query,
// and prepared once (an Index's large queries).
func BenchmarkGPUPreparedNearest(b *testing.B) {
	g := openGPU(b, DeviceMemory)
	ctx := context.Background()
	ref, obs := enginetest.SpherePoints(1<<16, 3), enginetest.SpherePoints(1<<20, 4)
	x, err := cpu.NewCPUIndex(ref)
	if err != nil {
		b.Fatal(err)
	}
	out := enginetest.NewResult(obs.Len())
	for _, tc := range []struct {
		name string
		prep *engine.Prepared
	}{{"fresh", nil}, {"prepared", x.Prepared()}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := g.Nearest(ctx, engine.Request{Obs: obs, Ref: ref, Algorithm: engine.Grid, Prepared: tc.prep}, out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
