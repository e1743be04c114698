package simulator

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/paulmach/orb"

	"github.com/geoknn/geoknn/sphere"
	"github.com/geoknn/geoknn/validate"
)

const deg = math.Pi / 180

// angleDiff is |a - b| as an angle, in (-pi, pi].
func angleDiff(a, b float64) float64 {
	return math.Abs(math.Remainder(a-b, 2*math.Pi))
}

// A quarter of the circumference east along the equator ends at +90°, in
// one step or in many.
func TestPropagateEastQuarter(t *testing.T) {
	quarter := math.Pi / 2 * sphere.EarthRadiusMetres
	lat, lon, h := Propagate(0, 0, 90*deg, quarter)
	if math.Abs(lat) > 1e-12 || math.Abs(lon-90*deg) > 1e-12 || math.Abs(h-90*deg) > 1e-12 {
		t.Errorf("one step: lat %v° lon %v° heading %v°, want 0, 90, 90", lat/deg, lon/deg, h/deg)
	}
	const speed, steps = 250.0, 1000
	m := &Movers{Lat: []float64{0}, Lon: []float64{0}, Heading: []float64{90 * deg}, Speed: []float64{speed}}
	dt := quarter / speed / steps
	for range steps {
		m.Step(dt)
	}
	if math.Abs(m.Lat[0]) > 1e-12 || math.Abs(m.Lon[0]-90*deg) > 1e-10 || math.Abs(m.Heading[0]-90*deg) > 1e-10 {
		t.Errorf("%d steps: lat %v° lon %v° heading %v°, want 0, 90, 90", steps, m.Lat[0]/deg, m.Lon[0]/deg, m.Heading[0]/deg)
	}
}

func TestPropagateAntimeridian(t *testing.T) {
	// 2° of longitude on the equator.
	d := 2 * deg * sphere.EarthRadiusMetres
	if _, lon, h := Propagate(0, 179*deg, 90*deg, d); math.Abs(lon+179*deg) > 1e-12 || math.Abs(h-90*deg) > 1e-12 {
		t.Errorf("east over the antimeridian: lon %v°, heading %v°; want -179, 90", lon/deg, h/deg)
	}
	if _, lon, h := Propagate(0, -179.5*deg, -90*deg, d); math.Abs(lon-178.5*deg) > 1e-12 || math.Abs(h+90*deg) > 1e-12 {
		t.Errorf("west over the antimeridian: lon %v°, heading %v°; want 178.5, -90", lon/deg, h/deg)
	}
	// Away from the equator the great circle is not a parallel, but the
	// longitude must still wrap into [-180, 180].
	lat, lon, _ := Propagate(40*deg, 170*deg, 80*deg, 2000e3)
	if lon > -150*deg || lon < -180*deg || lat < 0 {
		t.Errorf("north-east over the antimeridian from 40N 170E: lat %v° lon %v°", lat/deg, lon/deg)
	}
}

// A point heading north over the pole comes down the meridian 180° away,
// heading south, its latitude decreasing step by step: no bounce.
func TestPropagateOverPole(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lat, lon float64 // start, degrees
		step     float64 // degrees of arc per step
	}{
		{"north, off the pole", 80, 30, 3},
		{"north, through the pole exactly", 80, 30, 5},
		{"north, antimeridian", 85, 180, 4},
		{"north, negative longitude", 70, -120, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &Movers{Lat: []float64{tc.lat * deg}, Lon: []float64{tc.lon * deg}, Heading: []float64{0}, Speed: []float64{tc.step * deg * sphere.EarthRadiusMetres}}
			wantLon := tc.lon - 180
			if wantLon < -180 {
				wantLon += 360
			}
			lat := tc.lat
			crossed, wasCrossed := false, false
			for s := 1; s <= 15; s++ {
				m.Step(1)
				arc := tc.lat + float64(s)*tc.step // degrees travelled from the equator
				wasCrossed = crossed
				if arc > 90 {
					crossed = true
				}
				want := arc
				if crossed {
					want = 180 - arc
				}
				if math.Abs(m.Lat[0]/deg-want) > 1e-9 {
					t.Fatalf("step %d: lat %v°, want %v°", s, m.Lat[0]/deg, want)
				}
				if crossed && m.Lat[0]/deg < 90-1e-9 {
					if wasCrossed && m.Lat[0]/deg >= lat {
						t.Fatalf("step %d: latitude %v° not decreasing after the pole (was %v°)", s, m.Lat[0]/deg, lat)
					}
					if angleDiff(m.Lon[0], wantLon*deg) > 1e-9 {
						t.Fatalf("step %d: lon %v°, want %v°", s, m.Lon[0]/deg, wantLon)
					}
					if angleDiff(m.Heading[0], math.Pi) > 1e-9 {
						t.Fatalf("step %d: heading %v°, want 180°", s, m.Heading[0]/deg)
					}
				}
				if math.Abs(m.Lat[0]) > math.Pi/2 || math.Abs(m.Lon[0]) > math.Pi {
					t.Fatalf("step %d: out of range: lat %v lon %v rad", s, m.Lat[0], m.Lon[0])
				}
				lat = m.Lat[0] / deg
			}
			if !crossed {
				t.Fatal("never crossed the pole")
			}
		})
	}
	// South over the south pole too.
	lat, lon, h := Propagate(-85*deg, 10*deg, 180*deg, 10*deg*sphere.EarthRadiusMetres)
	if math.Abs(lat+85*deg) > 1e-12 || angleDiff(lon, -170*deg) > 1e-12 || angleDiff(h, 0) > 1e-12 {
		t.Errorf("over the south pole: lat %v° lon %v° heading %v°, want -85, -170, 0", lat/deg, lon/deg, h/deg)
	}
}

// Every step moves each point by speed*dt (haversine), and many small steps
// follow the same great circle as one long one: the heading is carried.
func TestStepDistanceAndCarriedHeading(t *testing.T) {
	const n, dt, steps = 5000, 60.0, 50
	lat, lon := make([]float64, n), make([]float64, n)
	if err := sphere.SphereRadians(n, 3, lat, lon); err != nil {
		t.Fatal(err)
	}
	// Put some on and near the poles and on the antimeridian.
	lat[0], lat[1], lat[2], lon[3] = math.Pi/2, -math.Pi/2, math.Pi/2-1e-9, math.Pi
	m := &Movers{Lat: lat, Lon: lon, Heading: make([]float64, n), Speed: make([]float64, n)}
	if err := RandomMotion(n, 3, 1, 300, m.Speed, m.Heading); err != nil {
		t.Fatal(err)
	}
	start := &Movers{Lat: slices.Clone(lat), Lon: slices.Clone(lon), Heading: slices.Clone(m.Heading), Speed: m.Speed}
	for s := range steps {
		before := &Movers{Lat: slices.Clone(m.Lat), Lon: slices.Clone(m.Lon)}
		m.step(dt, 1+s%3)
		for i := range n {
			a := sphere.ToDegrees(before.Lat[i], before.Lon[i])
			b := sphere.ToDegrees(m.Lat[i], m.Lon[i])
			want := m.Speed[i] * dt
			if got := validate.HaversineMetres(a, b); math.Abs(got-want) > 1e-6*want {
				t.Fatalf("step %d, point %d: moved %.9f m, want %.9f m", s, i, got, want)
			}
			if math.Abs(m.Lat[i]) > math.Pi/2 || math.Abs(m.Lon[i]) > math.Pi {
				t.Fatalf("step %d, point %d out of range: %v %v", s, i, m.Lat[i], m.Lon[i])
			}
		}
	}
	start.Step(dt * steps)
	for i := range n {
		a := sphere.ToDegrees(start.Lat[i], start.Lon[i])
		b := sphere.ToDegrees(m.Lat[i], m.Lon[i])
		if d := validate.HaversineMetres(a, b); d > 1e-3 {
			t.Fatalf("point %d: %d steps end %.6f m from one long step", i, steps, d)
		}
		if i > 2 && angleDiff(start.Heading[i], m.Heading[i]) > 1e-9 {
			t.Fatalf("point %d: heading %v° after %d steps, %v° after one", i, m.Heading[i]/deg, steps, start.Heading[i]/deg)
		}
	}
}

func TestRandomMotion(t *testing.T) {
	const n = 3*sphere.BlockSize + 5
	sp, hd := make([]float64, n), make([]float64, n)
	if err := RandomMotion(n, 9, 10, 20, sp, hd); err != nil {
		t.Fatal(err)
	}
	mean := 0.0
	for i := range n {
		if sp[i] < 10 || sp[i] > 20 || hd[i] < 0 || hd[i] >= 2*math.Pi {
			t.Fatalf("point %d: speed %v heading %v", i, sp[i], hd[i])
		}
		mean += sp[i]
	}
	if mean /= n; math.Abs(mean-15) > 0.1 {
		t.Errorf("mean speed %v, want 15", mean)
	}
	sp2, hd2 := make([]float64, n), make([]float64, n)
	_ = RandomMotion(n, 9, 10, 20, sp2, hd2)
	if !slices.Equal(sp, sp2) || !slices.Equal(hd, hd2) {
		t.Error("not reproducible")
	}
	if err := RandomMotion(n, 9, 7, 7, sp2, hd2); err != nil || sp2[0] != 7 || sp2[n-1] != 7 {
		t.Errorf("fixed speed: %v, %v", err, sp2[0])
	}
	for _, bad := range [][2]float64{{-1, 5}, {5, 4}, {0, math.Inf(1)}, {math.NaN(), 1}} {
		if err := RandomMotion(n, 9, bad[0], bad[1], sp, hd); err == nil {
			t.Errorf("speeds %v: no error", bad)
		}
	}
	if err := RandomMotion(n, 9, 0, 1, sp[:1], hd); err == nil {
		t.Error("short columns: no error")
	}
}

func TestMoversCheck(t *testing.T) {
	ok := Movers{Lat: []float64{0}, Lon: []float64{math.Pi}, Heading: []float64{1}, Speed: []float64{0}}
	if err := ok.Check(); err != nil {
		t.Error(err)
	}
	for _, m := range []Movers{
		{Lat: []float64{0}, Lon: []float64{0, 1}, Heading: []float64{1}, Speed: []float64{0}},
		{Lat: []float64{2}, Lon: []float64{0}, Heading: []float64{1}, Speed: []float64{0}},
		{Lat: []float64{0}, Lon: []float64{0}, Heading: []float64{math.NaN()}, Speed: []float64{0}},
		{Lat: []float64{0}, Lon: []float64{0}, Heading: []float64{0}, Speed: []float64{-1}},
	} {
		if err := m.Check(); err == nil {
			t.Errorf("%+v: no error", m)
		}
	}
}

func TestReplace(t *testing.T) {
	const n = 5*sphere.BlockSize + 321
	for _, frac := range []float64{0, 0.001, 0.1, 0.37, 1} {
		want := int(math.Round(frac * n))
		var first []uint32
		for _, w := range []int{1, 2, 5} {
			lat, lon := make([]float64, n), make([]float64, n)
			if err := sphere.SphereRadians(n, 1, lat, lon); err != nil {
				t.Fatal(err)
			}
			old := &Movers{Lat: slices.Clone(lat), Lon: slices.Clone(lon)}
			gen, err := sphere.NewGenerator("sphere", 1)
			if err != nil {
				t.Fatal(err)
			}
			r := newReplacer(frac, gen, 1, w)
			slots := make([]uint32, want)
			r.replace(2, lat, lon, slots)
			changed := 0
			for i := range n {
				if lat[i] != old.Lat[i] || lon[i] != old.Lon[i] {
					changed++
				}
			}
			if changed != want {
				t.Errorf("frac %v, %d workers: %d points changed, want %d", frac, w, changed, want)
			}
			for k, s := range slots {
				if k > 0 && s <= slots[k-1] {
					t.Fatalf("frac %v: slots not increasing at %d", frac, k)
				}
				if lat[s] == old.Lat[s] {
					t.Fatalf("frac %v: slot %d listed but not replaced", frac, s)
				}
			}
			if first == nil {
				first = slices.Clone(slots)
			} else if !slices.Equal(first, slots) {
				t.Errorf("frac %v: %d workers replace other slots", frac, w)
			}
			// Another step replaces another set.
			if want > 10 && want < n {
				s3 := make([]uint32, want)
				r.replace(3, lat, lon, s3)
				if slices.Equal(s3, slots) {
					t.Errorf("frac %v: steps 2 and 3 replace the same slots", frac)
				}
			}
		}
	}
}

// Fresh points follow the generator's distribution.
func TestReplaceDistribution(t *testing.T) {
	const n = 200000
	lat, lon := make([]float64, n), make([]float64, n)
	gen, _ := sphere.NewGenerator("sphere", 4)
	slots := make([]uint32, n)
	newReplacer(1, gen, 4, 2).replace(2, lat, lon, slots)
	z := 0.0
	polar := 0
	for i := range n {
		z += math.Sin(lat[i])
		if math.Abs(lat[i]) > 60*deg {
			polar++
		}
	}
	if z /= n; math.Abs(z) > 0.01 {
		t.Errorf("mean z %v", z)
	}
	if f := float64(polar) / n; math.Abs(f-(1-math.Sin(60*deg))) > 0.005 {
		t.Errorf("fraction beyond 60° %v", f)
	}
	if _, err := sphere.NewGenerator("nope", 1); err == nil {
		t.Error("unknown generator: no error")
	}
}

// Propagate agrees with the textbook destination-point formula away from
// the poles.
func TestPropagateMatchesFormula(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		lat1 := (r.Float64()*2 - 1) * 80 * deg
		lon1 := (r.Float64()*2 - 1) * math.Pi
		h := r.Float64() * 2 * math.Pi
		d := r.Float64() * 3e6
		dr := d / sphere.EarthRadiusMetres
		lat2 := math.Asin(math.Sin(lat1)*math.Cos(dr) + math.Cos(lat1)*math.Sin(dr)*math.Cos(h))
		lon2 := lon1 + math.Atan2(math.Sin(h)*math.Sin(dr)*math.Cos(lat1), math.Cos(dr)-math.Sin(lat1)*math.Sin(lat2))
		gl, gn, _ := Propagate(lat1, lon1, h, d)
		a, b := sphere.ToDegrees(gl, gn), orb.Point{math.Remainder(lon2, 2*math.Pi) / deg, lat2 / deg}
		if dd := validate.HaversineMetres(a, b); dd > 1e-4 {
			t.Fatalf("from %v %v heading %v° for %v m: %v, formula %v (%v m apart)", lat1/deg, lon1/deg, h/deg, d, a, b, dd)
		}
	}
}

// benchWorld is a simulation's host state at the target size: 2^24
// observations, 2^16 moving references, and a replacer of fraction frac
// with its buffers.
type benchWorld struct {
	lat, lon       []float64
	m              *Movers
	r              *replacer
	slots          []uint32
	newLat, newLon []float64
}

func newBenchWorld(b *testing.B, frac float64) *benchWorld {
	const nObs, nRef = 1 << 24, 1 << 16
	w := &benchWorld{lat: make([]float64, nObs), lon: make([]float64, nObs),
		m: &Movers{Lat: make([]float64, nRef), Lon: make([]float64, nRef), Heading: make([]float64, nRef), Speed: make([]float64, nRef)}}
	if err := sphere.SphereRadians(nObs, 1, w.lat, w.lon); err != nil {
		b.Fatal(err)
	}
	_ = sphere.SphereRadians(nRef, 2, w.m.Lat, w.m.Lon)
	_ = RandomMotion(nRef, 1, 0, 250, w.m.Speed, w.m.Heading)
	gen, _ := sphere.NewGenerator("sphere", 1)
	w.r = newReplacer(frac, gen, 1, runtime.GOMAXPROCS(0))
	k := sphere.ReplaceCount(frac, nObs)
	w.slots, w.newLat, w.newLon = make([]uint32, k), make([]float64, k), make([]float64, k)
	return w
}

// BenchmarkUpdate is the work between two queries at the headline size:
// 2^16 references moved, 10% of 2^24 observations replaced.
func BenchmarkUpdate(b *testing.B) {
	w := newBenchWorld(b, 0.1)
	step := 0
	for b.Loop() {
		step++
		w.m.Step(60)
		w.r.replace(step, w.lat, w.lon, w.slots)
	}
}

// BenchmarkMove, BenchmarkReplace and BenchmarkHostStep split the host's
// share of a step at the simulation target (2^16 references moved; 1% of
// 2^24 observations replaced, drawn into reused buffers as Run does).
func BenchmarkMove(b *testing.B) {
	w := newBenchWorld(b, 0.01)
	for b.Loop() {
		w.m.Step(60)
	}
}

func BenchmarkReplace(b *testing.B) {
	w := newBenchWorld(b, 0.01)
	step := 0
	for b.Loop() {
		step++
		w.r.draw(step, len(w.lat), w.slots, w.newLat, w.newLon)
	}
}

// BenchmarkHostStep runs the three one after another; Run overlaps them.
func BenchmarkHostStep(b *testing.B) {
	w := newBenchWorld(b, 0.01)
	step := 0
	for b.Loop() {
		step++
		w.m.Step(60)
		w.r.draw(step, len(w.lat), w.slots, w.newLat, w.newLon)
		for j, i := range w.slots {
			w.lat[i], w.lon[i] = w.newLat[j], w.newLon[j]
		}
	}
}
