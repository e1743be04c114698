package gpu

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/geoknn/geoknn/internal/cpu"
	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/enginetest"
	"github.com/geoknn/geoknn/internal/index"
)

// sessionSteps drives a session through steps that move the references,
// replace observations, change the reference count, add duplicates, crowd
// most references into one spot (no face cells can be made: the GPU's grid
// query answers those two steps, the second without trying the lists again,
// then the cells again) and skip the answers, and checks every answered step against a CPU brute-force query
// on the same points and every changed count against the host's. nref
// references: enough that the GPU's plan is a grid rather than brute force.
func sessionSteps(t *testing.T, eng engine.Engine, obs index.Points, algo engine.Algorithm, nref int) {
	t.Helper()
	ctx := context.Background()
	n := obs.Len()
	host := index.Points{Lat64: make([]float64, n), Lon64: make([]float64, n)}
	for i := range n {
		host.Lat64[i], host.Lon64[i] = obs.At(i)
	}
	if obs.Is32() {
		host = points32(host)
	}
	s, err := eng.NewSession(host, engine.SessionOptions{Algorithm: algo, Replan: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	if s.Len() != n {
		t.Fatalf("Len = %d, want %d", s.Len(), n)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	ref := enginetest.SpherePoints(nref, 21)
	var prev []uint32
	replacedSince := map[uint32]bool{}
	withCells := 0 // steps the GPU answered through the face cells
	for step := 1; step <= 8; step++ {
		if step > 1 {
			for i := range ref.Lat64 { // small moves, clamped into range
				ref.Lat64[i] = math.Max(-math.Pi/2, math.Min(math.Pi/2, ref.Lat64[i]+0.002*(rng.Float64()-0.5)))
				ref.Lon64[i] = math.Max(-math.Pi, math.Min(math.Pi, ref.Lon64[i]+0.002*(rng.Float64()-0.5)))
			}
			// Replace about 1% of the observations.
			var idx []uint32
			for i := 0; i < n; i += 1 + rng.IntN(200) {
				idx = append(idx, uint32(i))
			}
			fresh := enginetest.SpherePoints(len(idx), uint64(100+step))
			if obs.Is32() {
				fresh = points32(fresh)
			}
			// Two calls before the query: the second must not disturb the
			// first's copies still in flight.
			half := len(idx) / 2
			if err := s.Replace(ctx, idx[:half], fresh.Slice(0, half)); err != nil {
				t.Fatal(err)
			}
			if err := s.Replace(ctx, idx[half:], fresh.Slice(half, len(idx))); err != nil {
				t.Fatal(err)
			}
			for k, i := range idx {
				if host.Is32() {
					host.Lat32[i], host.Lon32[i] = fresh.Lat32[k], fresh.Lon32[k]
				} else {
					host.Lat64[i], host.Lon64[i] = fresh.Lat64[k], fresh.Lon64[k]
				}
				replacedSince[i] = true
			}
		}
		q := ref
		switch step {
		case 4: // more references: the plan must be redone
			q = index.Radians64(append(append([]float64(nil), ref.Lat64...), enginetest.SpherePoints(500, 31).Lat64...),
				append(append([]float64(nil), ref.Lon64...), enginetest.SpherePoints(500, 31).Lon64...))
		case 5: // duplicated references: the lowest index must win
			q = index.Radians64(append(append([]float64(nil), ref.Lat64...), ref.Lat64[:700]...),
				append(append([]float64(nil), ref.Lon64...), ref.Lon64[:700]...))
		case 6, 7: // 20,000 more within a few metres of one spot, twice under one plan
			q = index.Radians64(slices.Clone(ref.Lat64), slices.Clone(ref.Lon64))
			for k := range 20000 {
				q.Lat64 = append(q.Lat64, 0.4+1e-6*float64(k%139)/139)
				q.Lon64 = append(q.Lon64, 0.9+1e-6*float64(k%149)/149)
			}
		}
		want := enginetest.NewResult(n)
		if _, err := cpu.NewCPU(0).Nearest(ctx, engine.Request{Obs: host, Ref: q, Algorithm: engine.Brute}, want); err != nil {
			t.Fatal(err)
		}
		var got engine.Result
		answered := step != 3 // step 3 leaves the answers in the engine
		if answered {
			got = enginetest.NewResult(n)
		}
		st, err := s.Nearest(ctx, q, got)
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if prev != nil {
			changed := 0
			for i := range n {
				if !replacedSince[uint32(i)] && prev[i] != want.Index[i] {
					changed++
				}
			}
			if st.Changed != changed {
				t.Errorf("step %d: changed %d, want %d", step, st.Changed, changed)
			}
		}
		if st.Replaced != len(replacedSince) {
			t.Errorf("step %d: replaced %d, want %d", step, st.Replaced, len(replacedSince))
		}
		t.Logf("step %d: changed %d, replaced %d, kernels %v (index %v), %d refined; %s",
			step, st.Changed, st.Replaced, st.Kernel, st.Index, st.Refined, st.Note)
		if _, gpu := eng.(*GPU); gpu && algo == engine.Grid {
			cells := strings.Contains(st.Note, "face cells 6 x")
			if cells {
				withCells++
			}
			crowded := step == 6 || step == 7
			if strings.HasPrefix(st.Note, "grid ") && !strings.Contains(st.Note, "fell back") && cells == crowded {
				t.Errorf("step %d: %s; want face cells on every grid step but the crowded ones", step, st.Note)
			}
		}
		if answered {
			compareResults(t, host, q, want, got)
		}
		prev = want.Index
		clear(replacedSince)
	}
	if _, gpu := eng.(*GPU); gpu && algo == engine.Grid && withCells == 0 {
		t.Error("no step answered through the face cells")
	}
}

func TestCPUSession(t *testing.T) {
	for _, algo := range []engine.Algorithm{engine.Grid, engine.Brute} {
		t.Run(algo.String(), func(t *testing.T) {
			sessionSteps(t, cpu.NewCPU(0), enginetest.SpherePoints(20000, 5), algo, 3000)
		})
	}
}

func TestGPUSession(t *testing.T) {
	g := openGPU(t, DeviceMemory)
	for _, tc := range []struct {
		name string
		obs  index.Points
	}{
		{"float64", enginetest.SpherePoints(1<<18, 5)},
		// Not a multiple of four: count_changed's last answers are read one by one.
		{"float32", points32(enginetest.SpherePoints(1<<17+3, 6))},
	} {
		for _, algo := range []engine.Algorithm{engine.Grid, engine.Brute} {
			t.Run(tc.name+"/"+algo.String(), func(t *testing.T) { sessionSteps(t, g, tc.obs, algo, 30000) })
		}
	}
}

// A GPU session queues the face cells' first level and the query at once
// where the last lists took one level; when the references then crowd (the
// same count, so the same cells), the first level splits or fails, the
// query answers nothing, and the step is queried again through lists built
// level by level, or through the grid where they are refused. The changed
// count leaves out the observations replaced before each step.
func TestGPUSessionCellsSpeculation(t *testing.T) {
	g := openGPU(t, DeviceMemory)
	ctx := context.Background()
	obs := enginetest.SpherePoints(1<<18, 9)
	obs = index.Radians64(slices.Clone(obs.Lat64), slices.Clone(obs.Lon64)) // the host's copy, replaced alike
	const nref = 30000
	s, err := g.NewSession(obs, engine.SessionOptions{Algorithm: engine.Grid, Replan: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	uniform := func(seed uint64) index.Points { return enginetest.SpherePoints(nref, seed) }
	crowded := func(k int, spread float64) index.Points { // k of the references within spread radians of one spot
		q := enginetest.SpherePoints(nref, 44)
		for i := range k {
			q.Lat64[i] = 0.4 + spread*float64(i%139)/139
			q.Lon64[i] = 0.9 + spread*float64(i%149)/149
		}
		return q
	}
	var prev []uint32
	replaced := map[int]bool{}
	for step, tc := range []struct {
		ref   index.Points
		split bool // the step's lists split into finer levels
	}{
		{uniform(41), false},
		{uniform(42), false}, // queued unchecked, and right
		{crowded(3000, 0.02), true},
		{uniform(43), false},
		{uniform(45), false},
		{crowded(20000, 1e-6), false}, // refused: the grid answers
		{uniform(46), false},
	} {
		if step > 0 { // about 1% replaced
			clear(replaced)
			var idx []uint32
			for i := step; i < obs.Len(); i += 97 {
				idx = append(idx, uint32(i))
				replaced[i] = true
			}
			fresh := enginetest.SpherePoints(len(idx), uint64(60+step))
			if err := s.Replace(ctx, idx, fresh); err != nil {
				t.Fatal(err)
			}
			for k, i := range idx {
				obs.Lat64[i], obs.Lon64[i] = fresh.Lat64[k], fresh.Lon64[k]
			}
		}
		want, got := enginetest.NewResult(obs.Len()), enginetest.NewResult(obs.Len())
		if _, err := cpu.NewCPU(0).Nearest(ctx, engine.Request{Obs: obs, Ref: tc.ref, Algorithm: engine.Brute}, want); err != nil {
			t.Fatal(err)
		}
		st, err := s.Nearest(ctx, tc.ref, got)
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		t.Logf("step %d: changed %d; %s", step, st.Changed, st.Note)
		compareResults(t, obs, tc.ref, want, got)
		if prev != nil {
			changed := 0
			for i := range prev {
				if !replaced[i] && prev[i] != want.Index[i] {
					changed++
				}
			}
			if st.Changed != changed {
				t.Errorf("step %d: changed %d, want %d", step, st.Changed, changed)
			}
		}
		if split := strings.Contains(st.Note, "split into"); split != tc.split {
			t.Errorf("step %d: %q; want lists split into finer levels %v", step, st.Note, tc.split)
		}
		prev = want.Index
	}
}

func TestSessionRejectsBadInput(t *testing.T) {
	ctx := context.Background()
	s, err := cpu.NewCPU(1).NewSession(enginetest.SpherePoints(100, 1), engine.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pts := enginetest.SpherePoints(2, 2)
	for _, tc := range []struct {
		idx  []uint32
		pts  index.Points
		want string
	}{
		{[]uint32{5}, pts, "2 points"},
		{[]uint32{5, 100}, pts, "out of range"},
		{[]uint32{7, 7}, pts, "strictly increasing"},
		{[]uint32{9, 3}, pts, "strictly increasing"},
		{[]uint32{1, 2}, index.Radians64([]float64{0, 2}, []float64{0, 0}), "latitude"},
	} {
		if err := s.Replace(ctx, tc.idx, tc.pts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Replace(%v): %v, want an error with %q", tc.idx, err, tc.want)
		}
	}
	if _, err := s.Nearest(ctx, enginetest.SpherePoints(3, 3), engine.Result{Index: make([]uint32, 5), Distance: make([]float32, 5)}); err == nil {
		t.Error("Nearest accepted a result of the wrong size")
	}
	if _, err := cpu.NewCPU(1).NewSession(enginetest.SpherePoints(10, 1), engine.SessionOptions{Algorithm: engine.Seed}); err == nil {
		t.Error("a seed-algorithm session was accepted")
	}
}

// A session re-plans on its first query, every Replan queries, and when the
// reference count changes; brute-force sessions never plan.
func TestSessionPlanCadence(t *testing.T) {
	sample := engine.NewObsSample(enginetest.SpherePoints(5000, 1))
	refs := index.PrepareRefs(enginetest.SpherePoints(1<<16, 2)) // enough that the grid beats brute force
	more := index.PrepareRefs(enginetest.SpherePoints(1<<16+500, 3))
	p := engine.SessionPlan{Replan: 3}
	opts := engine.SessionOptions{Algorithm: engine.Grid}
	var planned []bool
	for q, r := range []*index.RefSet{refs, refs, refs, refs, more, more} {
		before := p.Uses
		p.Update(opts, sample, r, index.GPUGridCost)
		planned = append(planned, p.Uses == 1)
		if p.Shape.G == 0 || p.Note == "" {
			t.Fatalf("query %d: no grid planned (uses %d -> %d)", q, before, p.Uses)
		}
	}
	if want := []bool{true, false, false, true, true, false}; !slices.Equal(planned, want) {
		t.Errorf("planned %v, want %v", planned, want)
	}
	p.Update(engine.SessionOptions{Algorithm: engine.Brute}, sample, refs, index.GPUGridCost)
	if p.Shape.G != 0 {
		t.Error("a brute-force session got a grid")
	}
}

// The planning sample follows replacements of the observations it holds.
func TestObsSampleFollowsReplacements(t *testing.T) {
	obs := enginetest.SpherePoints(2000, 4)
	s := engine.NewObsSample(obs)
	if len(s.Idx) != 512 || !slices.IsSorted(s.Idx) {
		t.Fatalf("sample of %d, sorted %v", len(s.Idx), slices.IsSorted(s.Idx))
	}
	idx := []uint32{s.Idx[0], s.Idx[10], s.Idx[511]}
	pts := index.Radians64([]float64{0.1, 0.2, 0.3}, []float64{1, 2, 3})
	s.Replace(idx, pts)
	for k, want := range map[int]float64{0: 0.1, 10: 0.2, 511: 0.3} {
		if s.Pts.Lat64[k] != want {
			t.Errorf("sample %d: latitude %v, want %v", k, s.Pts.Lat64[k], want)
		}
	}
	if lat, _ := obs.At(int(s.Idx[1])); s.Pts.Lat64[1] != lat {
		t.Error("an observation not replaced changed in the sample")
	}
	if small := engine.NewObsSample(enginetest.SpherePoints(10, 5)); len(small.Idx) != 10 {
		t.Errorf("sample of 10 observations holds %d", len(small.Idx))
	}
}

// points32 is p (float64 columns) in float32 columns.
func points32(p index.Points) index.Points {
	return index.Radians32(toFloat32(p.Lat64), toFloat32(p.Lon64))
}

func toFloat32(s []float64) []float32 {
	out := make([]float32, len(s))
	for i, v := range s {
		out[i] = float32(v)
	}
	return out
}

// A GPU holds at most maxPartLen observations of a session, so that
// count_changed's 32-bit indices and stride stay below 2^31; its launch
// refuses a part past that too.
func TestSessionPartLen(t *testing.T) {
	if err := checkPartLen(maxPartLen, 1); err != nil {
		t.Errorf("%d observations a GPU: %v", maxPartLen, err)
	}
	if err := checkPartLen(maxPartLen+1, 2); err == nil {
		t.Errorf("%d observations a GPU: no error", maxPartLen+1)
	}
	var k residentKernels
	if err := k.runCountChanged(nil, 0, 0, 0, 1<<31-1, 0, 0, 132); err == nil {
		t.Error("count_changed over 2^31-1 answers on 132 SMs: no error")
	}
}
