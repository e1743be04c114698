package engine

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/pointio"
)

// openGPU returns a GPU engine or skips the test with a one-line reason.
func openGPU(t testing.TB, mem MemoryMode) *GPU {
	t.Helper()
	g, err := NewGPU(GPUOptions{Memory: mem})
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
	return g
}

// gpuCase is one query the GPU must answer exactly as the CPU does.
type gpuCase struct {
	name     string
	obs, ref Points
	batch    int
}

func edgeCases() []gpuCase {
	deg := math.Pi / 180
	poleObs := Radians64([]float64{90 * deg, -90 * deg, 89.9999 * deg, 0, 0, 0.5 * deg},
		[]float64{0, 180 * deg, -45 * deg, 180 * deg, -180 * deg, 179.9999 * deg})
	poleRef := Radians64([]float64{90 * deg, -89.99 * deg, 0, 0.5 * deg, 0.5 * deg},
		[]float64{77 * deg, 3 * deg, -179.9999 * deg, -180 * deg, 180 * deg})
	dup := spherePoints(3000, 11)
	dupRef := spherePoints(500, 12)
	dupRef.Lat64 = append(dupRef.Lat64, dupRef.Lat64...)
	dupRef.Lon64 = append(dupRef.Lon64, dupRef.Lon64...)
	onRef := spherePoints(700, 13)
	ref32lat, ref32lon := make([]float32, 5000), make([]float32, 5000)
	obs32lat, obs32lon := make([]float32, 20000), make([]float32, 20000)
	r := spherePoints(25000, 14)
	for i := range ref32lat {
		ref32lat[i], ref32lon[i] = float32(r.Lat64[i]), float32(r.Lon64[i])
	}
	for i := range obs32lat {
		obs32lat[i], obs32lon[i] = float32(r.Lat64[5000+i]), float32(r.Lon64[5000+i])
	}
	return []gpuCase{
		{"poles and antimeridian", poleObs, poleRef, 0},
		{"single reference", spherePoints(5000, 1), spherePoints(1, 2), 0},
		{"duplicates", dup, dupRef, 0},
		{"observations on references", onRef, onRef, 0},
		{"float32 columns", Radians32(obs32lat, obs32lon), Radians32(ref32lat, ref32lon), 0},
		{"few observations, many references (slices)", spherePoints(3000, 3), spherePoints(70000, 4), 0},
		{"many jobs", spherePoints(200000, 5), spherePoints(3000, 6), 8192},
		{"2^20 x 2^16", spherePoints(1<<20, 7), spherePoints(1<<16, 8), 0},
	}
}

func TestGPUMatchesCPU(t *testing.T) {
	for _, mem := range []MemoryMode{DeviceMemory, ManagedMemory} {
		g := openGPU(t, mem)
		for _, tc := range edgeCases() {
			for _, algo := range []Algorithm{Brute, Grid} {
				t.Run(mem.String()+"/"+algo.String()+"/"+tc.name, func(t *testing.T) {
					req := Request{Obs: tc.obs, Ref: tc.ref, BatchSize: tc.batch, Algorithm: algo}
					want, got := newResult(tc.obs.Len()), newResult(tc.obs.Len())
					for i := range got.Index {
						got.Index[i], got.Distance[i] = math.MaxUint32, float32(math.NaN()) // poison
					}
					if _, err := NewCPU(0).Nearest(context.Background(), Request{Obs: tc.obs, Ref: tc.ref, Algorithm: Brute}, want); err != nil {
						t.Fatal(err)
					}
					st, err := g.Nearest(context.Background(), req, got)
					if err != nil {
						t.Fatal(err)
					}
					t.Logf("%d jobs, kernels %v, %d refined; %s", st.Jobs, st.Kernel, st.Refined, st.Note)
					compareResults(t, tc.obs, tc.ref, want, got)
				})
			}
		}
	}
}

// compareResults requires identical indices and distances within 1 m; the
// first answers (up to 200k) are also checked against the naive oracle.
func compareResults(t *testing.T, obs, ref Points, want, got Result) {
	t.Helper()
	bad := 0
	for i := range want.Index {
		if got.Index[i] != want.Index[i] || math.Abs(float64(got.Distance[i]-want.Distance[i]))*earthRadius > 1 || math.IsNaN(float64(got.Distance[i])) {
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
		checkAgainstNaive(t, "gpu", obs, ref, got)
	}
}

func TestGPUCitiesAirports(t *testing.T) {
	dir := os.Getenv("GEOKNN_DATA") // where the shared point sets are, if not beside the checkout
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "data")
	}
	cities, err1 := pointio.ReadFile(filepath.Join(dir, "cities.csv"))
	airports, err2 := pointio.ReadFile(filepath.Join(dir, "airports.csv"))
	if err1 != nil || err2 != nil {
		t.Skipf("shared data not available: %v %v", err1, err2)
	}
	g := openGPU(t, DeviceMemory)
	obs := Radians64(make([]float64, len(cities)), make([]float64, len(cities)))
	for i, p := range cities {
		obs.Lat64[i], obs.Lon64[i] = p.Lat()*math.Pi/180, p.Lon()*math.Pi/180
	}
	ref := Radians64(make([]float64, len(airports)), make([]float64, len(airports)))
	for i, p := range airports {
		ref.Lat64[i], ref.Lon64[i] = p.Lat()*math.Pi/180, p.Lon()*math.Pi/180
	}
	req := Request{Obs: obs, Ref: ref, Algorithm: Brute}
	want, got := newResult(obs.Len()), newResult(obs.Len())
	if _, err := NewCPU(0).Nearest(context.Background(), req, want); err != nil {
		t.Fatal(err)
	}
	for _, algo := range []Algorithm{Brute, Grid} {
		req.Algorithm = algo
		st, err := g.Nearest(context.Background(), req, got)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("cities -> airports, %v: %d refined; %s", algo, st.Refined, st.Note)
		compareResults(t, obs, ref, want, got)
		// and airports -> cities: clustered references
		rev := Request{Obs: ref, Ref: obs, Algorithm: algo}
		w2, g2 := newResult(ref.Len()), newResult(ref.Len())
		if _, err := NewCPU(0).Nearest(context.Background(), Request{Obs: ref, Ref: obs, Algorithm: Brute}, w2); err != nil {
			t.Fatal(err)
		}
		if st, err = g.Nearest(context.Background(), rev, g2); err != nil {
			t.Fatal(err)
		}
		t.Logf("airports -> cities, %v: %d refined; %s", algo, st.Refined, st.Note)
		compareResults(t, ref, obs, w2, g2)
	}
}

// The seed port runs and is close to the truth; it is not exact (fp32
// haversine with fast trigonometry), so only its bulk is checked.
func TestGPUSeedPort(t *testing.T) {
	g := openGPU(t, DeviceMemory)
	obs, ref := spherePoints(1<<16, 21), spherePoints(4096, 22)
	want, got := newResult(obs.Len()), newResult(obs.Len())
	if _, err := NewCPU(0).Nearest(context.Background(), Request{Obs: obs, Ref: ref, Algorithm: Brute}, want); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Nearest(context.Background(), Request{Obs: obs, Ref: ref, Algorithm: Seed}, got); err != nil {
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
	obs, ref := spherePoints(1<<18, 1), spherePoints(1000, 2)
	if _, err := g.Nearest(ctx, Request{Obs: obs, Ref: ref, BatchSize: 1 << 14}, newResult(obs.Len())); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled query: err = %v, want context.Canceled", err)
	}
	// The engine stays usable after a cancelled query.
	out := newResult(obs.Len())
	if _, err := g.Nearest(context.Background(), Request{Obs: obs, Ref: ref}, out); err != nil {
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
