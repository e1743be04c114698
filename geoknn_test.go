package geoknn_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/paulmach/orb"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/internal/realdata"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/formats"
	"github.com/geoknn/geoknn/simulator"
	"github.com/geoknn/geoknn/sphere"
	"github.com/geoknn/geoknn/validate"
)

func sharedData(t testing.TB, name string) []orb.Point {
	t.Helper()
	dir, _, err := realdata.Dir()
	if err != nil {
		t.Fatal(err)
	}
	pts, err := formats.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return pts
}

// Every city's nearest airport, checked exactly against the float64
// haversine brute force.
func TestCitiesToAirports(t *testing.T) {
	cities, airports := sharedData(t, "cities.csv"), sharedData(t, "airports.csv")
	res, err := nearestDegrees(context.Background(), cities, airports, geoknn.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := validate.Exact(context.Background(), cities, airports, res.Index, res.DistanceRad)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s engine: %s", res.Stats.Engine, rep)
	if !rep.OK() {
		t.Fatalf("answers beyond tolerance: %s %v", rep, rep.Failures)
	}
}

func TestGoldenEdgeCases(t *testing.T) {
	ref := []orb.Point{
		{0, 90},       // 0 north pole
		{180, 0},      // 1 antimeridian, equator
		{-180, 0},     // 2 the same point, higher index
		{10, 10},      // 3
		{10, 10},      // 4 duplicate of 3
		{-170, -89.5}, // 5 near the south pole
	}
	for _, tc := range []struct {
		obs       orb.Point
		wantIndex uint32
		wantM     float64
		alsoRight uint32 // a reference at the same point, equally right
	}{
		{orb.Point{123, 90}, 0, 0, 0},            // pole: any longitude
		{orb.Point{-180, 0}, 1, 0, 2},            // lon -180 is lon 180: refs 1 and 2 are one point
		{orb.Point{179.999, 0}, 1, 111.19508, 2}, // across the antimeridian
		{orb.Point{10, 10}, 3, 0, 0},             // on a duplicated reference
		{orb.Point{10, -90}, 5, 55597.54, 0},     // south pole: 0.5 degree of arc
		{orb.Point{-170, -10}, 1, validate.HaversineMetres(orb.Point{-170, -10}, orb.Point{180, 0}), 2},
	} {
		res, err := nearestDegrees(context.Background(), []orb.Point{tc.obs}, ref, geoknn.Options{Engine: geoknn.CPU})
		if err != nil {
			t.Fatal(err)
		}
		if (res.Index[0] != tc.wantIndex && (tc.alsoRight == 0 || res.Index[0] != tc.alsoRight)) || math.Abs(res.Metres(0)-tc.wantM) > 1 {
			t.Errorf("%v: got ref %d at %.3f m, want ref %d at %.3f m", tc.obs, res.Index[0], res.Metres(0), tc.wantIndex, tc.wantM)
		}
	}
}

func TestAntipodes(t *testing.T) {
	res, err := nearestDegrees(context.Background(), []orb.Point{{30, 45}}, []orb.Point{{-150, -45}}, geoknn.Options{Engine: geoknn.CPU})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Metres(0), math.Pi*geoknn.EarthRadiusMetres; math.Abs(got-want) > 1 {
		t.Errorf("antipode at %.3f m, want %.3f m", got, want)
	}
}

func TestMoreThan65536References(t *testing.T) {
	obs, ref := sphere.Sphere(2000, 1), sphere.Sphere(70000, 2)
	res, err := nearestDegrees(context.Background(), obs, ref, geoknn.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := validate.Exact(context.Background(), obs, ref, res.Index, res.DistanceRad)
	if err != nil || !rep.OK() {
		t.Fatalf("%v %v", rep, err)
	}
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name     string
		obs, ref []orb.Point
	}{
		{"no references", []orb.Point{{0, 0}}, nil},
		{"latitude out of range", []orb.Point{{0, 91}}, []orb.Point{{0, 0}}},
		{"longitude out of range", []orb.Point{{0, 0}}, []orb.Point{{181, 0}}},
		{"NaN", []orb.Point{{math.NaN(), 0}}, []orb.Point{{0, 0}}},
		{"Inf", []orb.Point{{0, 0}}, []orb.Point{{0, math.Inf(1)}}},
	} {
		if _, err := nearestDegrees(context.Background(), tc.obs, tc.ref, geoknn.Options{Engine: geoknn.CPU}); err == nil {
			t.Errorf("%s: no error", tc.name)
		} else {
			t.Logf("%s: %v", tc.name, err)
		}
	}
}

func TestFloat32Columns(t *testing.T) {
	obs, ref := sphere.Sphere(3000, 3), sphere.Sphere(500, 4)
	col := func(pts []orb.Point) (lat, lon []float32) {
		for _, p := range pts {
			lat = append(lat, float32(p.Lat()*math.Pi/180))
			lon = append(lon, float32(p.Lon()*math.Pi/180))
		}
		return lat, lon
	}
	olat, olon := col(obs)
	rlat, rlon := col(ref)
	res, err := geoknn.Nearest(context.Background(), geoknn.Radians32(olat, olon), geoknn.Radians32(rlat, rlon), geoknn.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The truth for float32 input is the float32 values themselves.
	back := func(lat, lon []float32) []orb.Point {
		pts := make([]orb.Point, len(lat))
		for i := range lat {
			pts[i] = orb.Point{float64(lon[i]) * 180 / math.Pi, float64(lat[i]) * 180 / math.Pi}
		}
		return pts
	}
	rep, err := validate.Exact(context.Background(), back(olat, olon), back(rlat, rlon), res.Index, res.DistanceRad)
	if err != nil || !rep.OK() {
		t.Fatalf("%v %v", rep, err)
	}
}

func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	obs, ref := sphere.Sphere(100000, 1), sphere.Sphere(1000, 2)
	if _, err := nearestDegrees(ctx, obs, ref, geoknn.Options{}); err == nil {
		t.Fatal("no error from a cancelled query")
	}
}

// For every city, the nearest airport.
func ExampleNearest() {
	cities := []orb.Point{{2.3522, 48.8566}, {-0.1276, 51.5072}, {139.6917, 35.6895}} // Paris, London, Tokyo (lon, lat)
	airports := []orb.Point{{2.5479, 49.0097}, {-0.4543, 51.4700}, {139.7798, 35.5494}, {140.3929, 35.7720}}
	obs, err := geoknn.Degrees(cities)
	if err != nil {
		fmt.Println(err)
		return
	}
	ref, err := geoknn.Degrees(airports)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := geoknn.Nearest(context.Background(), obs, ref, geoknn.Options{Engine: geoknn.CPU})
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range cities {
		fmt.Printf("city %d -> airport %d, %.1f km\n", i, res.Index[i], res.Metres(i)/1000)
	}
	// Output:
	// city 0 -> airport 0, 22.2 km
	// city 1 -> airport 1, 23.0 km
	// city 2 -> airport 2, 17.5 km
}

// A Searcher keeps the engine open across queries, as a simulation whose
// references move every step does.
func ExampleSearcher() {
	s, err := geoknn.NewSearcher(geoknn.Options{Engine: geoknn.CPU})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	obs, err := geoknn.Generated(geoknn.UniformSphere, 1000, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	for step := 0; step < 3; step++ {
		ref, err := geoknn.Degrees(sphere.Sphere(100, uint64(step+10)))
		if err != nil {
			fmt.Println(err)
			return
		}
		res, err := s.Nearest(context.Background(), obs, ref)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("step %d: %d answers on the %s\n", step, len(res.Index), res.Stats.Engine)
	}
	// Output:
	// step 0: 1000 answers on the cpu
	// step 1: 1000 answers on the cpu
	// step 2: 1000 answers on the cpu
}

// A Session keeps the observations in the engine (on GPUs: in device memory)
// while the references move; each query sends only what changed and counts
// the answers that changed.
func ExampleSearcher_NewSession() {
	ctx := context.Background()
	s, err := geoknn.NewSearcher(geoknn.Options{Engine: geoknn.CPU})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	obs, err := geoknn.Degrees(sphere.Sphere(1000, 1))
	if err != nil {
		fmt.Println(err)
		return
	}
	sess, err := s.NewSession(obs)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sess.Close()
	movers := simulator.Movers{Lat: make([]float64, 50), Lon: make([]float64, 50),
		Heading: make([]float64, 50), Speed: make([]float64, 50)}
	_ = sphere.SphereRadians(50, 2, movers.Lat, movers.Lon)
	_ = simulator.RandomMotion(50, 3, 200, 200, movers.Speed, movers.Heading) // 200 m/s
	var res geoknn.Result                                                     // reused: its slices are filled in place every step
	for step := 1; step <= 3; step++ {
		if step > 1 {
			movers.Step(3600) // an hour
			// Observation 7 moves to the north pole.
			if err := sess.Replace(ctx, []uint32{7}, geoknn.Radians64([]float64{math.Pi / 2}, []float64{0})); err != nil {
				fmt.Println(err)
				return
			}
		}
		st, err := sess.Nearest(ctx, geoknn.Radians64(movers.Lat, movers.Lon), &res)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("step %d: %d answers, %d changed, %d replaced\n", step, len(res.Index), st.Changed, st.Replaced)
	}
	// Output:
	// step 1: 1000 answers, 0 changed, 0 replaced
	// step 2: 1000 answers, 280 changed, 1 replaced
	// step 3: 1000 answers, 246 changed, 1 replaced
}

// Poles and the antimeridian given as float32 radians (which round just
// outside [-pi/2, pi/2] and [-pi, pi]) are valid input.
func TestFloat32PolesAndAntimeridian(t *testing.T) {
	lat := []float32{float32(math.Pi / 2), float32(-math.Pi / 2), 0, 0}
	lon := []float32{0, 0, float32(math.Pi), float32(-math.Pi)}
	res, err := geoknn.Nearest(context.Background(), geoknn.Radians32(lat, lon), geoknn.Radians32(lat[:1], lon[:1]), geoknn.Options{Engine: geoknn.CPU})
	if err != nil {
		t.Fatal(err)
	}
	if res.Metres(0) > 1 || math.Abs(res.Metres(1)-math.Pi*geoknn.EarthRadiusMetres) > 1 {
		t.Errorf("pole to pole: %.3f m and %.3f m", res.Metres(0), res.Metres(1))
	}
}

// A Trace says where a query's time went, stage by stage.
func ExampleTrace() {
	tr := geoknn.NewTrace()
	obs, ref := sphere.Sphere(10000, 1), sphere.Sphere(100, 2)
	if _, err := nearestDegrees(context.Background(), obs, ref, geoknn.Options{Engine: geoknn.CPU, Trace: tr}); err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range tr.Stages()[:4] {
		fmt.Println(s.Name)
	}
	// Output:
	// engine start
	// check points
	// check observations
	// prepare references
}

// A generated set takes no memory; its points are sphere.Sphere's.
func ExampleGenerated() {
	obs, err := geoknn.Generated(geoknn.UniformSphere, 1<<20, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	lat, lon := obs.At(12345)
	fmt.Println(sphere.ToDegrees(lat, lon) == sphere.Sphere(12346, 1)[12345])
	// Output: true
}

func TestNewResultReused(t *testing.T) {
	s, err := geoknn.NewSearcher(geoknn.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	obs, _ := geoknn.Generated(geoknn.UniformSphere, 50000, 1)
	ref, _ := geoknn.Generated(geoknn.UniformDegrees, 3000, 2)
	res := geoknn.NewResult(obs.Len())
	unpin, err := s.PinResult(res)
	if err != nil {
		t.Fatal(err)
	}
	cpu, err := geoknn.NewSearcher(geoknn.Options{Engine: geoknn.CPU})
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	ref2, err := cpu.Nearest(context.Background(), obs, ref)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := s.NearestInto(context.Background(), obs, ref, res); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.Index, ref2.Index) {
			t.Fatalf("%s answers differ from the CPU's", res.Stats.Engine)
		}
	}
	if err := unpin(); err != nil {
		t.Errorf("unpin on the %s: %v", s.Engine(), err)
	}
}

func TestPinnedPointsAnswerAlike(t *testing.T) {
	s, err := geoknn.NewSearcher(geoknn.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	lat, lon := make([]float64, 100000), make([]float64, 100000)
	if err := sphere.SphereRadians(len(lat), 3, lat, lon); err != nil {
		t.Fatal(err)
	}
	obs := geoknn.Radians64(lat, lon)
	ref, _ := geoknn.Generated(geoknn.UniformSphere, 2000, 4)
	want, err := s.Nearest(context.Background(), obs, ref)
	if err != nil {
		t.Fatal(err)
	}
	unpin, err := s.Pin(obs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Nearest(context.Background(), obs, ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := unpin(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Index, want.Index) || !slices.Equal(got.DistanceRad, want.DistanceRad) {
		t.Errorf("answers on pinned points differ (%s engine)", s.Engine())
	}
}

// The three nearest airports of a city, and the airports within 50 km.
func ExampleSearcher_KNearest() {
	s, err := geoknn.NewSearcher(geoknn.Options{Engine: geoknn.CPU})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	zurich, _ := geoknn.Degrees([]orb.Point{{8.5417, 47.3769}})
	airports, _ := geoknn.Degrees([]orb.Point{{8.5492, 47.4582}, {7.5299, 47.59}, {9.0, 46.0}, {8.6, 47.45}})
	k, err := s.KNearest(context.Background(), zurich, airports, 3, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	for r := range k.K {
		fmt.Printf("%d: airport %d at %.1f km\n", r+1, k.Index[r], k.Metres(0, r)/1000)
	}
	w, err := s.WithinList(context.Background(), zurich, airports, 50e3)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("within 50 km:", w.Counts[0], w.Index)
	// Output:
	// 1: airport 0 at 9.1 km
	// 2: airport 3 at 9.2 km
	// 3: airport 1 at 79.6 km
	// within 50 km: 2 [0 3]
}

// formats.ReadFileRadians (the columns knn run reads files into) gives the
// bits geoknn.Degrees gives for the same points.
func TestReadFileRadiansMatchesRadians(t *testing.T) {
	dir, _, err := realdata.Dir()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "cities.csv")
	pts, err := formats.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := geoknn.Degrees(pts)
	lat, lon, _, err := formats.ReadFileRadians(context.Background(), path, pointio.ReadOptions{})
	wlat, wlon := want.Float64()
	if err != nil || !slices.Equal(lat, wlat) || !slices.Equal(lon, wlon) {
		t.Errorf("columns differ from geoknn.Radians (%v)", err)
	}
}

// nearestDegrees is geoknn.Nearest on points in degrees.
func nearestDegrees(ctx context.Context, obs, ref []orb.Point, opts geoknn.Options) (*geoknn.Result, error) {
	o, err := geoknn.Degrees(obs)
	if err != nil {
		return nil, err
	}
	r, err := geoknn.Degrees(ref)
	if err != nil {
		return nil, err
	}
	return geoknn.Nearest(ctx, o, r, opts)
}

// A query that fails lets go of the answer columns it allocated, memory
// never cleared, and leaves columns the caller gave it in place; one that
// succeeds writes every answer of its new columns.
func TestFailedQueryDropsNewAnswers(t *testing.T) {
	ctx := context.Background()
	n := 1<<18 + 1 // past the size made by make: new columns not cleared
	lat, lon := make([]float64, n), make([]float64, n)
	for i := range lat {
		lat[i], lon[i] = 1e-6*float64(i%1000), 2e-6*float64(i%777)
	}
	ref, _ := geoknn.Generated(geoknn.UniformSphere, 500, 2)
	for _, engine := range []geoknn.Engine{geoknn.Auto, geoknn.CPU} {
		s, err := geoknn.NewSearcher(geoknn.Options{Engine: engine})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		good := geoknn.Radians64(lat, lon)
		res, kres := &geoknn.Result{}, &geoknn.KResult{K: 2}
		if err := s.NearestInto(ctx, good, ref, res); err != nil {
			t.Fatal(err)
		}
		if err := s.KNearestInto(ctx, good, ref, 0, kres); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if res.Index[i] >= 500 || kres.Index[2*i] >= 500 || kres.Index[2*i+1] >= 500 || res.DistanceRad[i] != kres.DistanceRad[2*i] {
				t.Fatalf("%s: observation %d: nearest %d, k nearest %v", s.Engine(), i, res.Index[i], kres.Index[2*i:2*i+2])
			}
		}
		badLat := slices.Clone(lat)
		badLat[n-1] = math.NaN()
		bad := geoknn.Radians64(badLat, lon)
		fresh, freshK := &geoknn.Result{}, &geoknn.KResult{K: 2}
		if err := s.NearestInto(ctx, bad, ref, fresh); err == nil || fresh.Index != nil || fresh.DistanceRad != nil {
			t.Errorf("%s: failed nearest: err %v, %d and %d answers kept", s.Engine(), err, len(fresh.Index), len(fresh.DistanceRad))
		}
		if err := s.KNearestInto(ctx, bad, ref, 0, freshK); err == nil || freshK.Index != nil || freshK.DistanceRad != nil {
			t.Errorf("%s: failed k nearest: err %v, %d and %d answers kept", s.Engine(), err, len(freshK.Index), len(freshK.DistanceRad))
		}
		if err := s.NearestInto(ctx, bad, ref, res); err == nil || len(res.Index) != n {
			t.Errorf("%s: failed nearest into the caller's columns: err %v, %d answers", s.Engine(), err, len(res.Index))
		}
	}
}
