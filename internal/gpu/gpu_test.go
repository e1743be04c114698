package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/internal/cpu"
	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/enginetest"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/realdata"
	"github.com/geoknn/geoknn/pointio/formats"
	"github.com/geoknn/geoknn/sphere"
)

// openGPU returns a GPU engine or skips the test with a one-line reason.
func openGPU(t testing.TB, mem MemoryMode) *GPU {
	t.Helper()
	return openGPUWith(t, GPUOptions{Memory: mem})
}

// openGPUWith is openGPU with every option.
func openGPUWith(t testing.TB, opts GPUOptions) *GPU {
	t.Helper()
	g, err := NewGPU(opts)
	if errors.Is(err, cuda.ErrNoDriver) || errors.Is(err, ErrNoGPU) {
		t.Skipf("no GPU: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	// Every GPU open before the test's queries, so that small queries
	// too run on all of them.
	if _, err := g.allDevs(); err != nil {
		t.Fatal(err)
	}
	return g
}

// A query asked for while the GPUs beyond the first are still opening
// runs on those open and on any that join; answers are the CPU's, and
// Close waits for the GPUs still opening. A small query does not open the
// others at all; Close then has nothing to wait for.
func TestQueriesWhileGPUsOpen(t *testing.T) {
	obs, ref := enginetest.SpherePoints(1<<18, 21), enginetest.SpherePoints(5000, 22)
	for _, devices := range []int{0, -1} { // -1: every GPU present, asked for by number
		opts := GPUOptions{}
		if devices < 0 {
			n, err := deviceCount()
			if err != nil {
				t.Skipf("no GPU: %v", err)
			}
			opts.Devices = n
		}
		g, err := NewGPU(opts)
		if errors.Is(err, cuda.ErrNoDriver) || errors.Is(err, ErrNoGPU) {
			t.Skipf("no GPU: %v", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			st := gridMatchesBrute(t, g, obs, ref, 1<<14)
			t.Logf("GPUs asked %d: ran on %d", opts.Devices, len(st.Devices))
		}
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// deviceCount is the number of GPUs present.
func deviceCount() (int, error) {
	devs, _, err := ListDevices()
	return len(devs), err
}

// gpuCase is one query the GPU must answer exactly as the CPU does.
type gpuCase struct {
	name     string
	obs, ref index.Points
	batch    int
}

func edgeCases() []gpuCase {
	deg := math.Pi / 180
	poleObs := index.Radians64([]float64{90 * deg, -90 * deg, 89.9999 * deg, 0, 0, 0.5 * deg},
		[]float64{0, 180 * deg, -45 * deg, 180 * deg, -180 * deg, 179.9999 * deg})
	poleRef := index.Radians64([]float64{90 * deg, -89.99 * deg, 0, 0.5 * deg, 0.5 * deg},
		[]float64{77 * deg, 3 * deg, -179.9999 * deg, -180 * deg, 180 * deg})
	dup := enginetest.SpherePoints(3000, 11)
	dupRef := enginetest.SpherePoints(500, 12)
	dupRef.Lat64 = append(dupRef.Lat64, dupRef.Lat64...)
	dupRef.Lon64 = append(dupRef.Lon64, dupRef.Lon64...)
	onRef := enginetest.SpherePoints(700, 13)
	ref32lat, ref32lon := make([]float32, 5000), make([]float32, 5000)
	obs32lat, obs32lon := make([]float32, 20000), make([]float32, 20000)
	r := enginetest.SpherePoints(25000, 14)
	for i := range ref32lat {
		ref32lat[i], ref32lon[i] = float32(r.Lat64[i]), float32(r.Lon64[i])
	}
	for i := range obs32lat {
		obs32lat[i], obs32lon[i] = float32(r.Lat64[5000+i]), float32(r.Lon64[5000+i])
	}
	return []gpuCase{
		{"poles and antimeridian", poleObs, poleRef, 0},
		{"single reference", enginetest.SpherePoints(5000, 1), enginetest.SpherePoints(1, 2), 0},
		{"duplicates", dup, dupRef, 0},
		{"observations on references", onRef, onRef, 0},
		{"float32 columns", index.Radians32(obs32lat, obs32lon), index.Radians32(ref32lat, ref32lon), 0},
		{"few observations, many references (slices)", enginetest.SpherePoints(3000, 3), enginetest.SpherePoints(70000, 4), 0},
		{"many jobs", enginetest.SpherePoints(200000, 5), enginetest.SpherePoints(3000, 6), 8192},
		{"2^20 x 2^16", enginetest.SpherePoints(1<<20, 7), enginetest.SpherePoints(1<<16, 8), 0},
		{"generated on the device, sphere", index.Points{Gen: &index.Generated{Kind: index.GenSphere, Seed: 9, First: 1 << 33, N: 300001}},
			enginetest.SpherePoints(4096, 10), 65536},
		{"generated on the device, seed", index.Points{Gen: &index.Generated{Kind: index.GenSeed, Seed: 3, N: 70000}}, enginetest.SpherePoints(1000, 11), 0},
	}
}

// The device makes a generated set bit for bit as the Go twin does.
func TestGPUGeneratedMatchesTwin(t *testing.T) {
	g := openGPU(t, DeviceMemory)
	d := g.devs[0]
	for _, kind := range []index.GenKind{index.GenSphere, index.GenSeed} {
		gen := index.Generated{Kind: kind, Seed: 0xfeed, First: 1<<32 - 1000, N: 1<<20 + 3}
		lat, lon := make([]float64, gen.N), make([]float64, gen.N)
		err := d.onThread(func() error { return d.generateInto(gen, lat, lon) })
		if err != nil {
			t.Fatal(err)
		}
		bad := 0
		for i := range lat {
			a, b := kind.At()(gen.First+uint64(i), gen.Seed)
			if lat[i] != a || lon[i] != b {
				if bad < 3 {
					t.Errorf("kind %d, point %d: device (%v, %v), Go (%v, %v)", kind, i, lat[i], lon[i], a, b)
				}
				bad++
			}
		}
		if bad > 0 {
			t.Errorf("kind %d: %d of %d points differ", kind, bad, gen.N)
		}
	}
}

// The GPU's nearest answers are the CPU's on every edge case, in both
// memory modes and both algorithms; into a fresh result they are the
// same bit for bit.
func TestGPUMatchesCPU(t *testing.T) {
	for _, mem := range []MemoryMode{DeviceMemory, ManagedMemory} {
		g := openGPU(t, mem)
		for _, tc := range edgeCases() {
			for _, algo := range []engine.Algorithm{engine.Brute, engine.Grid} {
				t.Run(mem.String()+"/"+algo.String()+"/"+tc.name, func(t *testing.T) {
					req := engine.Request{Obs: tc.obs, Ref: tc.ref, BatchSize: tc.batch, Algorithm: algo}
					want, got := enginetest.NewResult(tc.obs.Len()), enginetest.NewResult(tc.obs.Len())
					for i := range got.Index {
						got.Index[i], got.Distance[i] = math.MaxUint32, float32(math.NaN()) // poison
					}
					if _, err := cpu.NewCPU(0).Nearest(context.Background(), engine.Request{Obs: tc.obs, Ref: tc.ref, Algorithm: engine.Brute}, want); err != nil {
						t.Fatal(err)
					}
					st, err := g.Nearest(context.Background(), req, got)
					if err != nil {
						t.Fatal(err)
					}
					t.Logf("%d jobs, kernels %v, %d refined; %s", st.Jobs, st.Kernel, st.Refined, st.Note)
					compareResults(t, tc.obs, tc.ref, want, got)
					sameAsFresh(t, g, req, got)
				})
			}
		}
	}
}

// sameAsFresh requires NearestFresh, which allocates its result beside
// the query's first jobs, to answer req as Nearest answered it into
// want, bit for bit.
func sameAsFresh(t *testing.T, g *GPU, req engine.Request, want engine.Result) {
	t.Helper()
	got, _, err := g.NearestFresh(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Index) != len(want.Index) || len(got.Distance) != len(want.Distance) {
		t.Fatalf("fresh result of %d and %d answers, want %d", len(got.Index), len(got.Distance), len(want.Index))
	}
	for i := range want.Index {
		if got.Index[i] != want.Index[i] || math.Float32bits(got.Distance[i]) != math.Float32bits(want.Distance[i]) {
			t.Fatalf("obs %d: fresh (%d, %v), into a result (%d, %v)", i, got.Index[i], got.Distance[i], want.Index[i], want.Distance[i])
		}
	}
}

// gridMatchesBrute answers obs against ref on g with the grid algorithm in
// jobs of batch observations, checks the answers against the CPU's brute
// force and returns the query's stats.
func gridMatchesBrute(t *testing.T, g *GPU, obs, ref index.Points, batch int) engine.Stats {
	t.Helper()
	want, got := enginetest.NewResult(obs.Len()), enginetest.NewResult(obs.Len())
	if _, err := cpu.NewCPU(0).Nearest(context.Background(), engine.Request{Obs: obs, Ref: ref, Algorithm: engine.Brute}, want); err != nil {
		t.Fatal(err)
	}
	st, err := g.Nearest(context.Background(), engine.Request{Obs: obs, Ref: ref, Algorithm: engine.Grid, BatchSize: batch}, got)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d jobs, kernels %v, %d refined; %s", st.Jobs, st.Kernel, st.Refined, st.Note)
	compareResults(t, obs, ref, want, got)
	return st
}

// compareResults requires the CPU's indices and distances, bit for bit (the
// engines make the same unit vectors and angles: sphere.cuh's unit_go and
// chord2_to_angle); small sets are also checked against the naive oracle.
func compareResults(t *testing.T, obs, ref index.Points, want, got engine.Result) {
	t.Helper()
	bad := 0
	for i := range want.Index {
		if got.Index[i] != want.Index[i] || math.Float32bits(got.Distance[i]) != math.Float32bits(want.Distance[i]) {
			if bad < 5 {
				t.Errorf("obs %d: gpu ref %d at %v rad, cpu ref %d at %v rad", i, got.Index[i], got.Distance[i], want.Index[i], want.Distance[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d answers differ", bad, len(want.Index))
	}
	if obs.Len()*ref.Len() <= 2e7 {
		enginetest.CheckAgainstNaive(t, "gpu", obs, ref, got)
	}
}

func TestGPUKNearestMatchesNaive(t *testing.T) {
	enginetest.KNearestMatchesNaive(t, openGPU(t, DeviceMemory))
}

func TestGPUWithinMatchesNaive(t *testing.T) {
	enginetest.WithinMatchesNaive(t, openGPU(t, DeviceMemory))
}

// The GPU's k nearest and radius answers are the CPU engine's, on the real
// sets both ways and on 2^18 random observations (float32 columns too),
// in jobs small enough that there are several.
func TestGPUNeighboursMatchCPU(t *testing.T) {
	g := openGPU(t, DeviceMemory)
	cities, airports := enginetest.RealSets(t)
	obs32 := enginetest.SpherePoints(1<<18, 31)
	obs32 = points32(obs32)
	for _, tc := range []struct {
		name     string
		obs, ref index.Points
	}{
		{"cities to airports", cities, airports}, {"airports to cities", airports, cities},
		{"2^18 float32 to 2^16", obs32, enginetest.SpherePoints(1<<16, 32)},
	} {
		for _, algo := range []engine.Algorithm{engine.Grid, engine.Brute} {
			req := engine.Request{Obs: tc.obs, Ref: tc.ref, Algorithm: algo, BatchSize: 50000}
			t.Run(fmt.Sprintf("%s/%v", tc.name, algo), func(t *testing.T) {
				for _, k := range []int{1, 8, 64} {
					compareKNearest(t, g, req, k, math.Inf(1))
				}
				compareKNearest(t, g, req, 8, 50e3/sphere.EarthRadiusMetres)
				compareWithin(t, g, req, 50e3/sphere.EarthRadiusMetres)
			})
		}
	}
}

func compareKNearest(t *testing.T, g *GPU, req engine.Request, k int, maxRad float64) {
	t.Helper()
	n := req.Obs.Len()
	want := engine.KResult{K: k, Index: make([]uint32, n*k), Distance: make([]float32, n*k)}
	got := engine.KResult{K: k, Index: make([]uint32, n*k), Distance: make([]float32, n*k)}
	if _, err := cpu.NewCPU(0).KNearest(context.Background(), req, maxRad, want); err != nil {
		t.Fatal(err)
	}
	st, err := g.KNearest(context.Background(), req, maxRad, got)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("k %d, limit %.3g rad: %d jobs, %d refined in float64, kernels %v; %s", k, maxRad, st.Jobs, st.Refined, st.Kernel, st.Note)
	for i := range want.Index {
		// A different reference at the same rank is a tie: two references
		// whose distances agree to the last float32 place.
		if math.Float32bits(want.Distance[i]) != math.Float32bits(got.Distance[i]) || (want.Index[i] != got.Index[i] && !slices.Contains(want.Index[i/k*k:i/k*k+k], got.Index[i])) {
			t.Fatalf("k %d: observation %d rank %d: GPU %d at %v, CPU %d at %v", k, i/k, i%k+1,
				got.Index[i], got.Distance[i], want.Index[i], want.Distance[i])
		}
	}
}

// The radius listing counts the rows it finds with other than their
// counted references (grid_within), which Within then refuses: here the
// counts are altered between the two passes, one row a reference short of
// what it holds and one a reference long.
func TestGPUWithinListingChecksCounts(t *testing.T) {
	g := openGPU(t, DeviceMemory)
	ctx := context.Background()
	req := engine.Request{Obs: enginetest.SpherePoints(1<<14, 41), Ref: enginetest.SpherePoints(1<<12, 42), Algorithm: engine.Grid}
	refs := req.All()
	q := &neighbourQuery{req: req, refs: refs, shape: neighbourShape(req, refs.N, 2),
		maxD2: index.ChordLimit(300e3 / sphere.EarthRadiusMetres), counts: make([]uint32, req.Obs.Len())}
	if _, err := g.runNeighbours(ctx, q, time.Now()); err != nil {
		t.Fatal(err)
	}
	var rows []int
	for i, c := range q.counts {
		if c > 0 && len(rows) < 2 {
			rows = append(rows, i)
		}
	}
	if len(rows) < 2 {
		t.Fatalf("%d rows hold references within 300 km, want 2 or more", len(rows))
	}
	q.counts[rows[0]]++ // the listing finds one fewer than counted
	q.counts[rows[1]]-- // and one more
	if err := q.prepareRows(); err != nil {
		t.Fatal(err)
	}
	st, err := g.runNeighbours(ctx, q, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if st.Refined != 2 {
		t.Errorf("the listing pass reported %d rows off their counts, want 2", st.Refined)
	}
}

func compareWithin(t *testing.T, g *GPU, req engine.Request, rad float64) {
	t.Helper()
	want, _, err := cpu.NewCPU(0).Within(context.Background(), req, rad, true)
	if err != nil {
		t.Fatal(err)
	}
	got, st, err := g.Within(context.Background(), req, rad, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("within %.3g rad: %d found, %d jobs, kernels %v; %s", rad, len(got.Index), st.Jobs, st.Kernel, st.Note)
	if !slices.Equal(want.Counts, got.Counts) || !slices.Equal(want.Offsets, got.Offsets) {
		t.Fatal("the GPU's radius counts differ from the CPU's")
	}
	ties := 0
	for i := range want.Counts {
		a, b := want.Offsets[i], want.Offsets[i+1]
		for e := a; e < b; e++ {
			if math.Float32bits(want.Distance[e]) != math.Float32bits(got.Distance[e]) {
				t.Fatalf("observation %d, entry %d: GPU reference %d at %v rad, CPU %d at %v", i, e-a,
					got.Index[e], got.Distance[e], want.Index[e], want.Distance[e])
			}
		}
		if !slices.Equal(want.Index[a:b], got.Index[a:b]) {
			ties++
			w, g := slices.Clone(want.Index[a:b]), slices.Clone(got.Index[a:b])
			slices.Sort(w)
			slices.Sort(g)
			if !slices.Equal(w, g) {
				t.Fatalf("observation %d: GPU references %v, CPU %v", i, got.Index[a:b], want.Index[a:b])
			}
		}
	}
	t.Logf("within %.3g rad: %d rows ordered differently among equal distances", rad, ties)
}

func TestGPUCitiesAirports(t *testing.T) {
	g := openGPU(t, DeviceMemory)
	dir, full, err := realdata.Dir()
	if err != nil {
		t.Fatal(err)
	}
	cities, err1 := formats.ReadFile(filepath.Join(dir, "cities.csv"))
	airports, err2 := formats.ReadFile(filepath.Join(dir, "airports.csv"))
	if err1 != nil || err2 != nil {
		t.Fatalf("real data (full set: %v): %v %v", full, err1, err2)
	}
	obs := index.Radians64(make([]float64, len(cities)), make([]float64, len(cities)))
	for i, p := range cities {
		obs.Lat64[i], obs.Lon64[i] = p.Lat()*math.Pi/180, p.Lon()*math.Pi/180
	}
	ref := index.Radians64(make([]float64, len(airports)), make([]float64, len(airports)))
	for i, p := range airports {
		ref.Lat64[i], ref.Lon64[i] = p.Lat()*math.Pi/180, p.Lon()*math.Pi/180
	}
	req := engine.Request{Obs: obs, Ref: ref, Algorithm: engine.Brute}
	want, got := enginetest.NewResult(obs.Len()), enginetest.NewResult(obs.Len())
	if _, err := cpu.NewCPU(0).Nearest(context.Background(), req, want); err != nil {
		t.Fatal(err)
	}
	for _, algo := range []engine.Algorithm{engine.Brute, engine.Grid} {
		req.Algorithm = algo
		st, err := g.Nearest(context.Background(), req, got)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("cities -> airports, %v: %d refined; %s", algo, st.Refined, st.Note)
		compareResults(t, obs, ref, want, got)
		// and airports -> cities: clustered references
		rev := engine.Request{Obs: ref, Ref: obs, Algorithm: algo}
		w2, g2 := enginetest.NewResult(ref.Len()), enginetest.NewResult(ref.Len())
		if _, err := cpu.NewCPU(0).Nearest(context.Background(), engine.Request{Obs: ref, Ref: obs, Algorithm: engine.Brute}, w2); err != nil {
			t.Fatal(err)
		}
		if st, err = g.Nearest(context.Background(), rev, g2); err != nil {
			t.Fatal(err)
		}
		t.Logf("airports -> cities, %v: %d refined; %s", algo, st.Refined, st.Note)
		compareResults(t, ref, obs, w2, g2)
	}
}

// References no grid suits go through the k-d tree (tree.cu), whose answers
// are brute force's: one cluster of about 600 m, clusters of a few metres
// to a few hundred kilometres with duplicates and mirror-image ties among
// them, and observations near and far.
func TestGPUTree(t *testing.T) {
	g := openGPU(t, DeviceMemory)
	rng := rand.New(rand.NewPCG(5, 6))
	one := index.Radians64(make([]float64, 20000), make([]float64, 20000))
	for i := range one.Lat64 {
		one.Lat64[i], one.Lon64[i] = 0.3+rng.Float64()*1e-4, 0.2+rng.Float64()*1e-4
	}
	var lat, lon []float64
	for _, c := range []struct {
		spread float64 // radians
		n      int
	}{{1e-6, 3000}, {1e-4, 6000}, {1e-3, 3000}, {3e-2, 6000}, {1e-5, 3000}} {
		clat, clon := rng.Float64()*2-1, rng.Float64()*6-3
		for range c.n {
			lat, lon = append(lat, clat+c.spread*rng.NormFloat64()), append(lon, clon+c.spread*rng.NormFloat64())
		}
	}
	for i := range 200 { // exact duplicates, and pairs mirrored about the first cluster's centre
		lat, lon = append(lat, lat[i]), append(lon, lon[i])
		lat, lon = append(lat, 2*lat[0]-lat[i+1]), append(lon, 2*lon[0]-lon[i+1])
	}
	many := index.Radians64(lat, lon)
	near := index.Radians64(make([]float64, 20000), make([]float64, 20000))
	for i := range near.Lat64 {
		k := rng.IntN(len(lat))
		near.Lat64[i], near.Lon64[i] = lat[k]+1e-4*rng.NormFloat64(), lon[k]+1e-4*rng.NormFloat64()
	}
	for _, tc := range []struct {
		name     string
		obs, ref index.Points
	}{
		{"one cluster, the globe", enginetest.SpherePoints(1<<16, 7), one},
		{"five clusters, the globe", enginetest.SpherePoints(1<<16, 8), many},
		{"five clusters, near them", near, many},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if st := gridMatchesBrute(t, g, tc.obs, tc.ref, 1<<14); !strings.Contains(st.Note, "k-d tree") {
				t.Errorf("planned %q, want the k-d tree", st.Note)
			}
		})
	}
}

// The seed port runs and is close to the truth; it is not exact (fp32
// haversine with fast trigonometry), so only its bulk is checked.
func TestGPUSeedPort(t *testing.T) {
	g := openGPU(t, DeviceMemory)
	obs, ref := enginetest.SpherePoints(1<<16, 21), enginetest.SpherePoints(4096, 22)
	want, got := enginetest.NewResult(obs.Len()), enginetest.NewResult(obs.Len())
	if _, err := cpu.NewCPU(0).Nearest(context.Background(), engine.Request{Obs: obs, Ref: ref, Algorithm: engine.Brute}, want); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Nearest(context.Background(), engine.Request{Obs: obs, Ref: ref, Algorithm: engine.Seed}, got); err != nil {
		t.Fatal(err)
	}
	same := 0
	for i := range want.Index {
		if want.Index[i] == got.Index[i] {
			same++
		}
	}
	if float64(same) < 0.99*float64(obs.Len()) {
		t.Errorf("seed port agrees on %d of %d answers", same, obs.Len())
	}
	t.Logf("seed port agrees with the exact answer on %d of %d observations", same, obs.Len())
}

func TestGPUCancel(t *testing.T) {
	g := openGPU(t, DeviceMemory)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	obs, ref := enginetest.SpherePoints(1<<18, 1), enginetest.SpherePoints(1000, 2)
	if _, err := g.Nearest(ctx, engine.Request{Obs: obs, Ref: ref, BatchSize: 1 << 14}, enginetest.NewResult(obs.Len())); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled query: err = %v, want context.Canceled", err)
	}
	// The engine stays usable after a cancelled query.
	out := enginetest.NewResult(obs.Len())
	if _, err := g.Nearest(context.Background(), engine.Request{Obs: obs, Ref: ref}, out); err != nil {
		t.Fatal(err)
	}
}

func TestListDevices(t *testing.T) {
	devs, version, err := ListDevices()
	if errors.Is(err, cuda.ErrNoDriver) {
		t.Skipf("no GPU: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range devs {
		t.Logf("driver %d: %s, FP32 peak %.1f TFLOP/s", version, d, d.FP32PeakFLOPS()/1e12)
		if d.Multiprocessors <= 0 || d.TotalMemory == 0 || d.ClockMHz <= 0 {
			t.Errorf("implausible device: %+v", d)
		}
	}
}

// What landing 2^27 answers (1 GiB) in host memory costs, three ways: a
// page-locked allocation, Go memory registered in parallel chunks, and Go
// memory only touched (the staged path copies into it). Logged, not
// asserted; the registered result must answer as the CPU does.
func TestGPUHostResultCosts(t *testing.T) {
	g := openGPU(t, DeviceMemory)
	const n = 1 << 27
	t0 := time.Now()
	p, err := g.AllocHost(8 * n)
	if err != nil {
		t.Fatal(err)
	}
	alloc := time.Since(t0)
	t0 = time.Now()
	if err := g.FreeHost(p); err != nil {
		t.Fatal(err)
	}
	free := time.Since(t0)
	buf := make([]uint64, n)
	t0 = time.Now()
	if err := g.RegisterHost(unsafe.Pointer(&buf[0]), 8*n); err != nil {
		t.Fatal(err)
	}
	reg := time.Since(t0)
	t0 = time.Now()
	if err := g.UnregisterHost(unsafe.Pointer(&buf[0])); err != nil {
		t.Fatal(err)
	}
	unreg := time.Since(t0)
	buf2 := make([]uint64, n)
	t0 = time.Now()
	index.ParallelFor(n, func(lo, hi int) {
		for i := lo; i < hi; i += 512 {
			buf2[i] = 1
		}
	})
	t.Logf("1 GiB: AllocHost %v (free %v), RegisterHost %v (unregister %v), touch in parallel %v", alloc, free, reg, unreg, time.Since(t0))

	obs := index.Points{Gen: &index.Generated{Kind: index.GenSphere, Seed: 5, N: 1 << 20}}
	ref := enginetest.SpherePoints(4096, 6)
	idx, dist := make([]uint32, obs.Len()), make([]float32, obs.Len())
	if err := g.RegisterHost(unsafe.Pointer(&idx[0]), 4*len(idx)); err != nil {
		t.Fatal(err)
	}
	defer g.UnregisterHost(unsafe.Pointer(&idx[0]))
	if err := g.RegisterHost(unsafe.Pointer(&dist[0]), 4*len(dist)); err != nil {
		t.Fatal(err)
	}
	defer g.UnregisterHost(unsafe.Pointer(&dist[0]))
	got := engine.Result{Index: idx, Distance: dist}
	if !g.pinnedOut(got) {
		t.Fatal("registered answers not seen as page-locked")
	}
	want := enginetest.NewResult(obs.Len())
	if _, err := cpu.NewCPU(0).Nearest(context.Background(), engine.Request{Obs: obs, Ref: ref, Algorithm: engine.Brute}, want); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Nearest(context.Background(), engine.Request{Obs: obs, Ref: ref, BatchSize: 1 << 16}, got); err != nil {
		t.Fatal(err)
	}
	compareResults(t, obs, ref, want, got)
}

// A bad observation found while jobs run stops the query, into a given
// result or a fresh one, with the same message as the CPU's, naming the
// point.
func TestGPUBadObservation(t *testing.T) {
	g := openGPU(t, DeviceMemory)
	obs := enginetest.SpherePoints(300000, 1)
	obs.Lat64[250001] = math.NaN()
	obs.Lon64[70000] = 4 // jobs run out of order: the first bad point is named
	ref := enginetest.SpherePoints(1000, 2)
	req := engine.Request{Obs: obs, Ref: ref, BatchSize: 1 << 16}
	_, gerr := g.Nearest(context.Background(), req, enginetest.NewResult(obs.Len()))
	_, _, ferr := g.NearestFresh(context.Background(), req)
	_, cerr := cpu.NewCPU(0).Nearest(context.Background(), engine.Request{Obs: obs, Ref: ref}, enginetest.NewResult(obs.Len()))
	if gerr == nil || cerr == nil || gerr.Error() != cerr.Error() {
		t.Errorf("GPU: %v\nCPU: %v", gerr, cerr)
	}
	if ferr == nil || cerr == nil || ferr.Error() != cerr.Error() {
		t.Errorf("GPU, fresh result: %v\nCPU: %v", ferr, cerr)
	}
}

// Observations in page-locked memory are copied in straight from the
// caller's columns and checked on the device (valid.cu): a bad one gets the
// CPU's message, in float64 and float32 columns, and good ones the CPU's
// answers.
func TestGPUBadObservationPinned(t *testing.T) {
	g := openGPU(t, DeviceMemory)
	ref := enginetest.SpherePoints(1000, 2)
	for _, is32 := range []bool{false, true} {
		obs := enginetest.SpherePoints(300000, 1)
		if is32 {
			obs = points32(obs)
		}
		pinColumns(t, g, obs)
		if !g.pinnedIn(obs) {
			t.Fatal("registered observations not seen as page-locked")
		}
		req := engine.Request{Obs: obs, Ref: ref, BatchSize: 1 << 16}
		got, want := enginetest.NewResult(obs.Len()), enginetest.NewResult(obs.Len())
		if _, err := g.Nearest(context.Background(), req, got); err != nil {
			t.Fatal(err)
		}
		if _, err := cpu.NewCPU(0).Nearest(context.Background(), engine.Request{Obs: obs, Ref: ref}, want); err != nil {
			t.Fatal(err)
		}
		compareResults(t, obs, ref, want, got)
		setPoint(obs, 250001, math.NaN(), 0)
		setPoint(obs, 70000, 0, 4)
		_, gerr := g.Nearest(context.Background(), req, got)
		_, cerr := cpu.NewCPU(0).Nearest(context.Background(), engine.Request{Obs: obs, Ref: ref}, want)
		if gerr == nil || cerr == nil || gerr.Error() != cerr.Error() {
			t.Errorf("float32 %v: GPU: %v\nCPU: %v", is32, gerr, cerr)
		}
	}
}

// pinColumns registers obs's columns for g until the test ends.
func pinColumns(t *testing.T, g *GPU, obs index.Points) {
	cols := [2]unsafe.Pointer{unsafe.Pointer(unsafe.SliceData(obs.Lat64)), unsafe.Pointer(unsafe.SliceData(obs.Lon64))}
	size := 8 * obs.Len()
	if obs.Is32() {
		cols = [2]unsafe.Pointer{unsafe.Pointer(unsafe.SliceData(obs.Lat32)), unsafe.Pointer(unsafe.SliceData(obs.Lon32))}
		size = 4 * obs.Len()
	}
	for _, p := range cols {
		if err := g.RegisterHost(p, size); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.UnregisterHost(p) })
	}
}

// setPoint sets point i of obs, in its columns' precision.
func setPoint(obs index.Points, i int, lat, lon float64) {
	if obs.Is32() {
		obs.Lat32[i], obs.Lon32[i] = float32(lat), float32(lon)
		return
	}
	obs.Lat64[i], obs.Lon64[i] = lat, lon
}

// Closing the engine closes its sessions: using one afterwards is an
// error, closing it again is not.
func TestGPUCloseWithOpenSession(t *testing.T) {
	g := openGPU(t, DeviceMemory)
	obs, ref := enginetest.SpherePoints(5000, 1), enginetest.SpherePoints(100, 2)
	s, err := g.NewSession(obs, engine.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Nearest(context.Background(), ref, engine.Result{}); err == nil {
		t.Error("a session of a closed engine answered")
	}
	if err := s.Close(); err != nil {
		t.Errorf("closing a session of a closed engine: %v", err)
	}
}

// A driver error anywhere in a query comes back naming the GPU and the
// call, never a hang or a wrong answer; an allocation failure is retried
// with smaller jobs; and the engine answers correctly afterwards.
func TestGPUFaults(t *testing.T) {
	// One GPU: the fault plan counts the driver's calls of every device,
	// and on several GPUs which one meets the fault would be a race.
	g := openGPUWith(t, GPUOptions{Memory: DeviceMemory, Devices: 1})
	obs, ref := enginetest.SpherePoints(1<<20, 3), enginetest.SpherePoints(5000, 4)
	want := enginetest.NewResult(obs.Len())
	if _, err := cpu.NewCPU(0).Nearest(context.Background(), engine.Request{Obs: obs, Ref: ref, Algorithm: engine.Brute}, want); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		op       string
		nth      int
		code     cuda.Result
		recovers bool
	}{
		{"cuMemAlloc_v2", 3, cuda.ErrorOutOfMemory, true},
		{"cuLaunchKernel", 9, cuda.ErrorLaunchFailed, false},
		{"cuMemcpyHtoDAsync_v2", 2, cuda.ErrorIllegalAddress, false},
		{"cuMemcpyDtoHAsync_v2", 4, cuda.ErrorUnknown, false},
		{"cuStreamSynchronize", 3, cuda.ErrorLaunchTimeout, false},
		{"cuEventRecord", 11, cuda.ErrorInvalidHandle, false},
		{"cuMemcpyDtoHAsync_v2", 1, cuda.ErrorIllegalAddress, false}, // the face cells' status
	} {
		t.Run(tc.op, func(t *testing.T) {
			g.releaseBuffers() // so that the query allocates again
			g.drv.InjectFault(tc.op, tc.nth, tc.code)
			got := enginetest.NewResult(obs.Len())
			done := make(chan error, 1)
			req := engine.Request{Obs: obs, Ref: ref, BatchSize: 1 << 16} // 16 jobs: every call comes often
			if tc.recovers {
				req.BatchSize = 0 // sized by the engine, which may then shrink it
			}
			go func() {
				_, err := g.Nearest(context.Background(), req, got)
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(60 * time.Second):
				t.Fatal("the query hangs after the fault")
			}
			g.drv.InjectFault("", 0, 0)
			switch {
			case tc.recovers && err != nil:
				t.Fatalf("not retried: %v", err)
			case tc.recovers:
				compareResults(t, obs, ref, want, got)
			case err == nil || !strings.Contains(err.Error(), "GPU 0") || !strings.Contains(err.Error(), tc.op):
				t.Fatalf("error %v does not name the GPU and %s", err, tc.op)
			}
			again := enginetest.NewResult(obs.Len())
			st, err := g.Nearest(context.Background(), engine.Request{Obs: obs, Ref: ref}, again)
			if err != nil {
				t.Fatalf("after the fault: %v", err)
			}
			t.Logf("after the fault: %s", st.Note)
			compareResults(t, obs, ref, want, again)
		})
	}
}

// 1,000 queries of varying sizes, and sessions opened and closed, leave
// the GPU's free memory and the Go heap where the first ones left them.
func TestGPUNoGrowth(t *testing.T) {
	g := openGPU(t, DeviceMemory)
	rng := rand.New(rand.NewPCG(5, 6))
	round := func() {
		n, m := 1000+rng.IntN(60000), 10+rng.IntN(5000)
		obs, ref := enginetest.SpherePoints(n, rng.Uint64()), enginetest.SpherePoints(m, rng.Uint64())
		if _, err := g.Nearest(context.Background(), engine.Request{Obs: obs, Ref: ref, Algorithm: engine.Algorithm(rng.IntN(2))}, enginetest.NewResult(n)); err != nil {
			t.Fatal(err)
		}
		if rng.IntN(20) == 0 {
			s, err := g.NewSession(obs, engine.SessionOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Nearest(context.Background(), ref, enginetest.NewResult(n)); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	for range 100 { // warm-up: buffers reach their sizes
		round()
	}
	free0, heap0 := gpuFree(t, g), heapInUse()
	for range 1000 {
		round()
	}
	free1, heap1 := gpuFree(t, g), heapInUse()
	t.Logf("after 100 and 1,100 queries: GPU free %d -> %d MiB, Go heap %d -> %d KiB", free0>>20, free1>>20, heap0>>10, heap1>>10)
	if free1+64<<20 < free0 || heap1 > heap0+32<<20 {
		t.Errorf("memory grows: GPU free %d -> %d MiB, heap %d -> %d KiB", free0>>20, free1>>20, heap0>>10, heap1>>10)
	}
}

func gpuFree(t *testing.T, g *GPU) uint64 {
	var free uint64
	err := g.devs[0].onThread(func() error {
		var err error
		free, _, err = g.drv.MemGetInfo()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return free
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}
