package validate_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/paulmach/orb"

	"github.com/geoknn/geoknn/sphere"
	"github.com/geoknn/geoknn/validate"
)

func randomPoints(rng *rand.Rand, n int) []orb.Point {
	pts := make([]orb.Point, n)
	for i := range pts {
		pts[i] = orb.Point{rng.Float64()*360 - 180, math.Asin(rng.Float64()*2-1) / deg}
	}
	return pts
}

func TestBruteForceGolden(t *testing.T) {
	type want struct {
		index int
		rad   float64
	}
	tests := []struct {
		name string
		ref  []orb.Point
		obs  []orb.Point
		want []want
	}{
		{
			name: "one reference",
			ref:  []orb.Point{{10, 20}},
			obs:  []orb.Point{{10, 20}, {-170, -20}, {10, 21}},
			want: []want{{0, 0}, {0, math.Pi}, {0, 1 * deg}},
		},
		{
			name: "poles",
			ref:  []orb.Point{{0, 90}, {0, -90}, {0, 0}},
			obs:  []orb.Point{{45, 80}, {-120, -60}, {10, 10}, {77, 90}, {-3, -90}},
			// (10,10) to (0,0): cos c = cos 10° cos 10°.
			want: []want{{0, 10 * deg}, {1, 30 * deg}, {2, math.Acos(math.Cos(10*deg) * math.Cos(10*deg))}, {0, 0}, {1, 0}},
		},
		{
			name: "antimeridian",
			ref:  []orb.Point{{179, 0}, {-179.5, 0}, {0, 0}, {180, 45}},
			obs:  []orb.Point{{-179.9, 0}, {179.9, 0}, {-180, 0}, {-180, 45}},
			want: []want{{1, 0.4 * deg}, {1, 0.6 * deg}, {1, 0.5 * deg}, {3, 0}},
		},
		{
			name: "duplicates take the lowest index",
			ref:  []orb.Point{{10, 10}, {5, 5}, {5, 5}, {10, 10}},
			obs:  []orb.Point{{5, 5}, {6, 5}, {10, 10}, {9, 10}},
			// One degree of longitude at latitude φ: h = cos²φ sin²(0.5°).
			want: []want{{1, 0}, {1, 2 * math.Asin(math.Cos(5*deg)*math.Sin(0.5*deg))}, {0, 0}, {0, 2 * math.Asin(math.Cos(10*deg)*math.Sin(0.5*deg))}},
		},
		{
			name: "observation on a reference",
			ref:  []orb.Point{{1, 1}, {2, 2}, {3, 3}},
			obs:  []orb.Point{{2, 2}, {3, 3}, {1, 1}},
			want: []want{{1, 0}, {2, 0}, {0, 0}},
		},
		{
			name: "antipodal references",
			ref:  []orb.Point{{0, 0}, {180, 0}},
			// Every point of the 90° meridians and the poles is a tie.
			obs:  []orb.Point{{90, 0}, {-90, 0}, {0, 90}, {0, -90}, {90, 45}, {-180, 0}},
			want: []want{{0, math.Pi / 2}, {0, math.Pi / 2}, {0, math.Pi / 2}, {0, math.Pi / 2}, {0, math.Pi / 2}, {1, 0}},
		},
		{
			name: "pole references at different longitudes tie",
			ref:  []orb.Point{{0, 90}, {120, 90}},
			obs:  []orb.Point{{50, 89}, {-50, 90}},
			want: []want{{0, 1 * deg}, {0, 0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			index, dist, err := validate.BruteForce(context.Background(), tt.obs, tt.ref)
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range tt.want {
				if int(index[i]) != w.index || math.Abs(dist[i]-w.rad) > 1e-12 {
					t.Errorf("obs %v: got ref %d at %.15g rad, want ref %d at %.15g rad", tt.obs[i], index[i], dist[i], w.index, w.rad)
				}
			}
		})
	}
}

// at returns the point the given metres north and east of the origin.
func at(north, east float64) orb.Point {
	return orb.Point{east / sphere.EarthRadiusMetres / deg, north / sphere.EarthRadiusMetres / deg}
}

func TestExactVerdicts(t *testing.T) {
	obs := []orb.Point{{0, 0}}
	ref := []orb.Point{
		at(10, 0),    // 0: nearest
		at(-10.5, 0), // 1: 0.5 m farther
		at(0, 12),    // 2: 2 m farther
		at(0, -10),   // 3: exactly as near as 0
	}
	rad := func(m float64) float32 { return float32(m / sphere.EarthRadiusMetres) }
	tests := []struct {
		name                  string
		index                 uint32
		dist                  float32
		indexWrong, distWrong int
		ties                  int
		failure               bool
	}{
		{"right", 0, rad(10), 0, 0, 0, false},
		{"exact tie", 3, rad(10), 0, 0, 1, false},
		{"within tolerance", 1, rad(10.5), 0, 0, 1, false},
		{"distance 0.9 m off", 0, rad(10.9), 0, 0, 0, false},
		{"wrong index", 2, rad(12), 1, 0, 0, true},
		{"wrong distance", 0, rad(11.5), 0, 1, 0, true},
		{"both wrong", 2, rad(100), 1, 1, 0, true},
		{"index out of range", 4, rad(10), 1, 0, 0, true},
		{"huge index", math.MaxUint32, rad(10), 1, 0, 0, true},
		{"NaN distance", 0, float32(math.NaN()), 0, 1, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := validate.Exact(context.Background(), obs, ref, []uint32{tt.index}, []float32{tt.dist})
			if err != nil {
				t.Fatal(err)
			}
			if r.Checked != 1 || r.IndexWrong != tt.indexWrong || r.DistanceWrong != tt.distWrong || r.Ties != tt.ties {
				t.Errorf("got %v, want %d wrong index, %d wrong distance, %d ties", r, tt.indexWrong, tt.distWrong, tt.ties)
			}
			if r.OK() != (tt.indexWrong+tt.distWrong == 0) {
				t.Errorf("OK() = %v for %v", r.OK(), r)
			}
			if got := len(r.Failures) == 1; got != tt.failure {
				t.Fatalf("failures %v, want one: %v", r.Failures, tt.failure)
			}
			if tt.failure {
				f := r.Failures[0]
				if f.Obs != 0 || f.Returned != int(tt.index) || f.Nearest != 0 || math.Abs(f.NearestMetres-10) > 1e-6 {
					t.Errorf("failure %+v", f)
				}
			}
		})
	}
}

func TestExactMaxima(t *testing.T) {
	obs := []orb.Point{{0, 0}, {0, 0}}
	ref := []orb.Point{at(10, 0), at(-10.5, 0)}
	r, err := validate.Exact(context.Background(), obs, ref, []uint32{1, 0},
		[]float32{float32(10.5 / sphere.EarthRadiusMetres), float32(10.75 / sphere.EarthRadiusMetres)})
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || r.Ties != 1 || math.Abs(r.MaxExcess-0.5) > 1e-6 || math.Abs(r.MaxDistanceError-0.75) > 1e-5 {
		t.Errorf("got %v", r)
	}
}

func TestExactMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	obs, ref := randomPoints(rng, 3000), randomPoints(rng, 400)
	// The second half of ref repeats the first, so the lowest-index nearest
	// is always in the first half and its copy is an exact tie.
	ref = append(ref, ref...)
	index, dist, err := validate.BruteForce(context.Background(), obs, ref)
	if err != nil {
		t.Fatal(err)
	}
	answer := func(shift uint32) ([]uint32, []float32) {
		idx, d := make([]uint32, len(obs)), make([]float32, len(obs))
		for i := range obs {
			if index[i] >= 400 {
				t.Fatalf("obs %d: nearest %d is not the lowest index", i, index[i])
			}
			idx[i], d[i] = index[i]+shift, float32(dist[i])
		}
		return idx, d
	}

	idx, d := answer(0)
	r, err := validate.Exact(context.Background(), obs, ref, idx, d)
	if err != nil || !r.OK() || r.Checked != len(obs) || r.Ties != 0 || r.MaxExcess != 0 {
		t.Errorf("brute force answer: %v, %v", r, err)
	}
	idx, d = answer(400)
	r, err = validate.Exact(context.Background(), obs, ref, idx, d)
	if err != nil || !r.OK() || r.Ties != len(obs) || r.MaxExcess != 0 {
		t.Errorf("duplicate answer: %v, %v", r, err)
	}
}

func TestSampled(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	obs, ref := randomPoints(rng, 1000), randomPoints(rng, 200)
	index, dist, err := validate.BruteForce(context.Background(), obs, ref)
	if err != nil {
		t.Fatal(err)
	}
	// Every answer is wrong: the next reference, with its true distance.
	idx, d := make([]uint32, len(obs)), make([]float32, len(obs))
	for i := range obs {
		idx[i] = (index[i] + 1) % uint32(len(ref))
		d[i] = float32(validate.Haversine(obs[i], ref[idx[i]]))
	}
	_ = dist

	tests := []struct {
		name    string
		n       int
		seed    int64
		checked int
	}{
		{"few", 100, 1, 100},
		{"other seed", 100, 2, 100},
		{"one", 1, 1, 1},
		{"all", 1000, 1, 1000},
		{"more than all", 5000, 1, 1000},
	}
	first := map[int64][]validate.Failure{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := validate.Sampled(context.Background(), obs, ref, idx, d, tt.n, tt.seed)
			if err != nil {
				t.Fatal(err)
			}
			if r.Checked != tt.checked || r.IndexWrong != tt.checked || r.DistanceWrong != 0 || r.OK() {
				t.Errorf("got %v, want %d checked, all with wrong index", r, tt.checked)
			}
			if want := min(tt.checked, validate.MaxFailures); len(r.Failures) != want {
				t.Fatalf("%d failures, want %d", len(r.Failures), want)
			}
			for k, f := range r.Failures {
				if k > 0 && f.Obs <= r.Failures[k-1].Obs {
					t.Errorf("failures not in increasing order: %v", r.Failures)
				}
				if f.Returned != int(idx[f.Obs]) || f.Nearest != int(index[f.Obs]) {
					t.Errorf("failure %+v", f)
				}
			}
			if tt.n == 100 {
				first[tt.seed] = r.Failures
				again, _ := validate.Sampled(context.Background(), obs, ref, idx, d, tt.n, tt.seed)
				if again.Failures[0] != r.Failures[0] || again.Failures[9] != r.Failures[9] {
					t.Errorf("same seed, different sample")
				}
			}
		})
	}
	if a, b := first[1], first[2]; len(a) > 0 && len(b) > 0 && a[0] == b[0] && a[9] == b[9] {
		t.Errorf("seeds 1 and 2 drew the same sample")
	}
}

func TestInputErrors(t *testing.T) {
	obs := []orb.Point{{0, 0}, {1, 1}}
	ref := []orb.Point{{2, 2}}
	idx, d := []uint32{0, 0}, []float32{0, 0}
	nan := math.NaN()
	tests := []struct {
		name string
		obs  []orb.Point
		ref  []orb.Point
		idx  []uint32
		d    []float32
		n    int
	}{
		{"short index", obs, ref, idx[:1], d, 10},
		{"long distance", obs, ref, idx, []float32{0, 0, 0}, 10},
		{"no references", obs, nil, idx, d, 10},
		{"NaN observation", []orb.Point{{0, 0}, {nan, 1}}, ref, idx, d, 10},
		{"infinite reference", obs, []orb.Point{{math.Inf(1), 0}}, idx, d, 10},
		{"sample of zero", obs, ref, idx, d, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := validate.Sampled(context.Background(), tt.obs, tt.ref, tt.idx, tt.d, tt.n, 1); err == nil {
				t.Error("Sampled: no error")
			}
			if tt.n == 0 {
				return
			}
			if _, err := validate.Exact(context.Background(), tt.obs, tt.ref, tt.idx, tt.d); err == nil {
				t.Error("Exact: no error")
			}
			if len(tt.idx) == len(tt.obs) && len(tt.d) == len(tt.obs) {
				if _, _, err := validate.BruteForce(context.Background(), tt.obs, tt.ref); err == nil {
					t.Error("BruteForce: no error")
				}
			}
		})
	}
}

func TestEmpty(t *testing.T) {
	r, err := validate.Exact(context.Background(), nil, []orb.Point{{0, 0}}, nil, nil)
	if err != nil || r.Checked != 0 || !r.OK() {
		t.Errorf("got %v, %v", r, err)
	}
	index, dist, err := validate.BruteForce(context.Background(), nil, []orb.Point{{0, 0}})
	if err != nil || len(index) != 0 || len(dist) != 0 {
		t.Errorf("got %v, %v, %v", index, dist, err)
	}
}

func TestCancel(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	obs, ref := randomPoints(rng, 20000), randomPoints(rng, 100000)
	idx, d := make([]uint32, len(obs)), make([]float32, len(obs))

	calls := map[string]func(context.Context) error{
		"BruteForce": func(ctx context.Context) error { _, _, err := validate.BruteForce(ctx, obs, ref); return err },
		"Exact":      func(ctx context.Context) error { _, err := validate.Exact(ctx, obs, ref, idx, d); return err },
		"Sampled": func(ctx context.Context) error {
			_, err := validate.Sampled(ctx, obs, ref, idx, d, 15000, 1)
			return err
		},
	}
	for name, call := range calls {
		t.Run(name+"/before", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if err := call(ctx); !errors.Is(err, context.Canceled) {
				t.Errorf("got %v, want context.Canceled", err)
			}
		})
		t.Run(name+"/during", func(t *testing.T) {
			// 2e9 pairs take far longer than 20 ms, even on many cores.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			start := time.Now()
			if err := call(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("got %v, want context.DeadlineExceeded", err)
			}
			if el := time.Since(start); el > time.Second {
				t.Errorf("took %v to stop", el)
			}
		})
	}
}

func BenchmarkBruteForce(b *testing.B) {
	rng := rand.New(rand.NewPCG(11, 12))
	obs, ref := randomPoints(rng, 1024), randomPoints(rng, 1<<16)
	for b.Loop() {
		if _, _, err := validate.BruteForce(context.Background(), obs, ref); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*float64(len(obs)*len(ref))/b.Elapsed().Seconds()/1e9, "Gpairs/s")
}

func TestSampleIndices(t *testing.T) {
	a, b := validate.SampleIndices(1000, 100, 7), validate.SampleIndices(1000, 100, 7)
	if !reflect.DeepEqual(a, b) || len(a) != 100 {
		t.Fatalf("not reproducible or wrong length: %d", len(a))
	}
	for i := 1; i < len(a); i++ {
		if a[i] <= a[i-1] || a[i] >= 1000 {
			t.Fatalf("not increasing distinct in range: %v", a)
		}
	}
	if all := validate.SampleIndices(5, 10, 1); !reflect.DeepEqual(all, []int{0, 1, 2, 3, 4}) {
		t.Errorf("all: %v", all)
	}
}
