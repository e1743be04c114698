package sphere

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/paulmach/orb"

	"github.com/paulmach/orb/geo"
)

// generator pairs the two forms of one generator, taking a worker count so
// that tests can check the output does not depend on it.
type generator struct {
	name    string
	points  func(n int, seed uint64) []orb.Point
	columns func(n int, seed uint64, workers int, lat, lon []float64) error
	block   func(seed uint64) Generator
}

func generators(t testing.TB) []generator {
	clustered := func(seed uint64) Generator {
		f, err := clusteredBlock(seed, 16, 300)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	gens := []generator{
		{name: "seed", points: SeedUniform, block: func(uint64) Generator { return seedBlock }},
		{name: "sphere", points: Sphere, block: func(uint64) Generator { return sphereBlock }},
		{name: "clustered", points: func(n int, seed uint64) []orb.Point { return Clustered(n, seed, 16, 300) }, block: clustered},
	}
	for i := range gens {
		g := &gens[i]
		g.columns = func(n int, seed uint64, workers int, lat, lon []float64) error {
			if f, ok := IndexedByName(g.name); ok { // point by point: no workers to vary
				return indexedColumns(n, seed, f, lat, lon)
			}
			return columns(n, seed, workers, g.block(seed), lat, lon)
		}
	}
	return gens
}

func validPoint(p orb.Point) bool {
	return p[1] >= -90 && p[1] <= 90 && p[0] >= -180 && p[0] <= 180
}

func TestDeterminism(t *testing.T) {
	const n = 3*BlockSize + 123
	for _, g := range generators(t) {
		t.Run(g.name, func(t *testing.T) {
			a, b := g.points(n, 1), g.points(n, 1)
			if !slices.Equal(a, b) {
				t.Fatal("same seed, different points")
			}
			if c := g.points(n, 2); slices.Equal(a[:100], c[:100]) {
				t.Fatal("seeds 1 and 2 give the same points")
			}
			// Blocks must not repeat each other.
			if slices.Equal(a[:100], a[BlockSize:BlockSize+100]) {
				t.Fatal("blocks 0 and 1 start alike")
			}
			// A prefix is the same set cut short.
			if short := g.points(BlockSize+5, 1); !slices.Equal(short, a[:BlockSize+5]) {
				t.Fatal("a shorter set is not a prefix")
			}
		})
	}
}

func TestColumnsMatchPoints(t *testing.T) {
	const n = 2*BlockSize + 777
	for _, g := range generators(t) {
		t.Run(g.name, func(t *testing.T) {
			pts := g.points(n, 42)
			for _, w := range []int{1, 2, 3, 8} {
				lat, lon := make([]float64, n+3), make([]float64, n+3)
				if err := g.columns(n, 42, w, lat, lon); err != nil {
					t.Fatal(err)
				}
				for i := range n {
					if got := ToDegrees(lat[i], lon[i]); got != pts[i] {
						t.Fatalf("workers %d, point %d: columns give %v, points %v", w, i, got, pts[i])
					}
					if math.Abs(lat[i]) > math.Pi/2 || math.Abs(lon[i]) > math.Pi {
						t.Fatalf("point %d out of range: lat %v lon %v rad", i, lat[i], lon[i])
					}
				}
				if lat[n] != 0 || lon[n+2] != 0 {
					t.Fatal("wrote past n")
				}
			}
		})
	}
}

func TestPublicColumnForms(t *testing.T) {
	const n = 5000
	tests := []struct {
		name    string
		points  []orb.Point
		columns func(lat, lon []float64) error
	}{
		{"seed", SeedUniform(n, 7), func(lat, lon []float64) error { return SeedUniformRadians(n, 7, lat, lon) }},
		{"sphere", Sphere(n, 7), func(lat, lon []float64) error { return SphereRadians(n, 7, lat, lon) }},
		{"clustered", Clustered(n, 7, 5, 50), func(lat, lon []float64) error { return ClusteredRadians(n, 7, 5, 50, lat, lon) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lat, lon := make([]float64, n), make([]float64, n)
			if err := tt.columns(lat, lon); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				if got := ToDegrees(lat[i], lon[i]); got != tt.points[i] {
					t.Fatalf("point %d: columns give %v, points %v", i, got, tt.points[i])
				}
			}
			if err := tt.columns(lat[:n-1], lon); err == nil {
				t.Error("short latitude column: no error")
			}
		})
	}
}

func TestDistributions(t *testing.T) {
	const n = 200000
	beyond60 := func(pts []orb.Point) float64 {
		c := 0
		for _, p := range pts {
			if math.Abs(p[1]) > 60 {
				c++
			}
		}
		return float64(c) / float64(len(pts))
	}
	meanZ := func(pts []orb.Point) float64 {
		s := 0.0
		for _, p := range pts {
			s += math.Sin(p[1] * math.Pi / 180)
		}
		return s / float64(len(pts))
	}
	// Standard errors: fraction about 0.001, mean z about 0.0013; the bounds
	// are several times that.
	tests := []struct {
		name     string
		pts      []orb.Point
		beyond60 float64
	}{
		{"seed", SeedUniform(n, 3), 1.0 / 3},
		{"sphere", Sphere(n, 3), 1 - math.Sin(60*math.Pi/180)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if f := beyond60(tt.pts); math.Abs(f-tt.beyond60) > 0.005 {
				t.Errorf("fraction beyond 60° = %.4f, want %.4f", f, tt.beyond60)
			}
			if z := meanZ(tt.pts); math.Abs(z) > 0.01 {
				t.Errorf("mean z = %.4f, want 0", z)
			}
			lonMean := 0.0
			for _, p := range tt.pts {
				lonMean += p[0]
			}
			if lonMean /= n; math.Abs(lonMean) > 1.5 {
				t.Errorf("mean longitude = %.3f°, want 0", lonMean)
			}
		})
	}
}

func TestValidPoints(t *testing.T) {
	const n = 100000
	sets := map[string][]orb.Point{
		"seed":              SeedUniform(n, 11),
		"sphere":            Sphere(n, 11),
		"clustered":         Clustered(n, 11, DefaultClusters, DefaultSpreadKm),
		"clustered, wide":   Clustered(n, 11, 3, 5000),
		"clustered, huge":   Clustered(n, 11, 2, 1e5),
		"clustered, points": Clustered(n, 11, 1000, 0),
	}
	for name, pts := range sets {
		t.Run(name, func(t *testing.T) {
			if len(pts) != n {
				t.Fatalf("%d points, want %d", len(pts), n)
			}
			for i, p := range pts {
				if !validPoint(p) {
					t.Fatalf("point %d is invalid: %v", i, p)
				}
			}
		})
	}
}

func TestClusteredNearCentres(t *testing.T) {
	const (
		n        = 20000
		clusters = 8
		spreadKm = 100.0
	)
	fr := centres(5, clusters)
	cs := make([]orb.Point, clusters)
	for i, f := range fr {
		cs[i] = ToDegrees(math.Asin(f.c[2]), math.Atan2(f.c[1], f.c[0]))
	}
	pts := Clustered(n, 5, clusters, spreadKm)
	// The distance to the centre is Rayleigh distributed: mean square
	// 2σ², and beyond 6σ with probability e^-18.
	sum2, used := 0.0, make([]int, clusters)
	for i, p := range pts {
		best, bi := math.Inf(1), 0
		for j, c := range cs {
			if d := haversineMetres(p, c) / 1000; d < best {
				best, bi = d, j
			}
		}
		if best > 6*spreadKm {
			t.Fatalf("point %d %v is %.0f km from the nearest centre", i, p, best)
		}
		sum2 += best * best
		used[bi]++
	}
	if ms, want := sum2/n, 2*spreadKm*spreadKm; math.Abs(ms/want-1) > 0.05 {
		t.Errorf("mean square distance %.0f km², want %.0f", ms, want)
	}
	for j, u := range used {
		if u < n/clusters/2 {
			t.Errorf("cluster %d has %d points, want about %d", j, u, n/clusters)
		}
	}
}

func TestDisplaceAtPoles(t *testing.T) {
	sigma := 50 / (EarthRadiusMetres / 1000)
	for _, c := range [][3]float64{{0, 0, 1}, {0, 0, -1}, {1, 0, 0}, {-1, 0, 0}, {0, 0.6, 0.8}} {
		f := newFrame(c)
		for _, v := range [][3]float64{f.c, f.e, f.u} {
			if n := v[0]*v[0] + v[1]*v[1] + v[2]*v[2]; math.Abs(n-1) > 1e-15 {
				t.Fatalf("centre %v: basis vector %v has norm² %v", c, v, n)
			}
		}
		centre := ToDegrees(math.Asin(c[2]), math.Atan2(c[1], c[0]))
		for _, d := range [][2]float64{{1, 0}, {0, 1}, {-3, 2}, {0.5, -0.5}} {
			lat, lon := f.displace(d[0]*sigma, d[1]*sigma)
			p := ToDegrees(lat, lon)
			want := math.Hypot(d[0], d[1]) * 50
			if got := haversineMetres(centre, p) / 1000; !validPoint(p) || math.Abs(got-want) > 1e-6 {
				t.Errorf("centre %v, step %v: %v at %.9f km, want %.9f km", c, d, p, got, want)
			}
		}
	}
}

func TestBadArguments(t *testing.T) {
	lat, lon := make([]float64, 10), make([]float64, 10)
	tests := []struct {
		name string
		err  error
	}{
		{"negative n", SphereRadians(-1, 1, lat, lon)},
		{"short columns", SeedUniformRadians(11, 1, lat, lon)},
		{"short longitudes", SphereRadians(10, 1, lat, lon[:3])},
		{"no clusters", ClusteredRadians(10, 1, 0, 10, lat, lon)},
		{"negative spread", ClusteredRadians(10, 1, 4, -1, lat, lon)},
		{"NaN spread", ClusteredRadians(10, 1, 4, math.NaN(), lat, lon)},
		{"infinite spread", ClusteredRadians(10, 1, 4, math.Inf(1), lat, lon)},
	}
	for _, tt := range tests {
		if tt.err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
	if pts := Clustered(10, 1, 0, 10); pts != nil {
		t.Errorf("Clustered with no clusters gave %d points", len(pts))
	}
	if pts := Sphere(-1, 1); pts != nil {
		t.Errorf("Sphere(-1) gave %d points", len(pts))
	}
	if pts := Sphere(0, 1); len(pts) != 0 {
		t.Errorf("Sphere(0) gave %d points", len(pts))
	}
	if err := SphereRadians(0, 1, nil, nil); err != nil {
		t.Errorf("SphereRadians(0): %v", err)
	}
}

func TestByName(t *testing.T) {
	for _, name := range Names() {
		gen, err := ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		cols, err := RadiansByName(name)
		if err != nil {
			t.Fatal(err)
		}
		pts := gen(1000, 9)
		lat, lon := make([]float64, 1000), make([]float64, 1000)
		if err := cols(1000, 9, lat, lon); err != nil {
			t.Fatal(err)
		}
		for i := range pts {
			if ToDegrees(lat[i], lon[i]) != pts[i] {
				t.Fatalf("%s: point %d differs between forms", name, i)
			}
		}
	}
	if got, want := Clustered(100, 4, DefaultClusters, DefaultSpreadKm), mustByName(t, "clustered")(100, 4); !slices.Equal(got, want) {
		t.Error(`ByName("clustered") does not use the defaults`)
	}
	for _, bad := range []string{"", "Sphere", "uniform"} {
		if _, err := ByName(bad); err == nil {
			t.Errorf("ByName(%q): no error", bad)
		}
		if _, err := RadiansByName(bad); err == nil {
			t.Errorf("RadiansByName(%q): no error", bad)
		}
	}
	_, err := ByName("nope")
	if want := `sphere: unknown generator "nope" (valid: seed, sphere, clustered)`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func mustByName(t *testing.T, name string) func(int, uint64) []orb.Point {
	g, err := ByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// BenchmarkColumns measures the column forms; the 2^27 case (2 GiB of
// columns) is skipped with -short.
func BenchmarkColumns(b *testing.B) {
	gens := []struct {
		name string
		gen  func(n int, seed uint64, lat, lon []float64) error
	}{
		{"seed", SeedUniformRadians},
		{"sphere", SphereRadians},
		{"clustered", func(n int, seed uint64, lat, lon []float64) error {
			return ClusteredRadians(n, seed, DefaultClusters, DefaultSpreadKm, lat, lon)
		}},
	}
	for _, log2n := range []int{22, 27} {
		for _, g := range gens {
			b.Run(fmt.Sprintf("%s/2^%d", g.name, log2n), func(b *testing.B) {
				if log2n > 22 && testing.Short() {
					b.Skip("large set skipped with -short")
				}
				n := 1 << log2n
				lat, lon := make([]float64, n), make([]float64, n)
				for b.Loop() {
					if err := g.gen(n, 1, lat, lon); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)*float64(n)/b.Elapsed().Seconds()/1e6, "Mpoints/s")
			})
		}
	}
}

func BenchmarkSphere(b *testing.B) {
	for b.Loop() {
		Sphere(1<<20, 1)
	}
}

// haversineMetres is orb's haversine distance on this package's sphere.
func haversineMetres(a, b orb.Point) float64 {
	return geo.DistanceHaversine(a, b) / orb.EarthRadius * EarthRadiusMetres
}
