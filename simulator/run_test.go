package simulator

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/paulmach/orb"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/sphere"
	"github.com/geoknn/geoknn/validate"
)

func smallConfig() Config {
	return Config{
		Obs: 3000, Ref: 40, ObsGen: "sphere", RefGen: "clustered", Seed: 5,
		Steps: 6, Dt: 600, MinSpeed: 50, MaxSpeed: 300, Replace: 0.1,
		Options: geoknn.Options{Engine: geoknn.CPU},
	}
}

func toPoints(p geoknn.Points) []orb.Point {
	pts := make([]orb.Point, p.Len())
	for i := range pts {
		pts[i] = sphere.ToDegrees(p.At(i))
	}
	return pts
}

// recorded is what a test keeps of each step.
type recorded struct {
	step     Step
	obs, ref []orb.Point
	index    []uint32
}

func record(t *testing.T, cfg Config, workers int) ([]recorded, Summary) {
	t.Helper()
	var steps []recorded
	sum, err := run(context.Background(), cfg, func(s Step) error {
		steps = append(steps, recorded{step: s, obs: toPoints(s.Obs), ref: toPoints(s.Ref), index: s.Result.Index})
		return nil
	}, workers)
	if err != nil {
		t.Fatal(err)
	}
	return steps, sum
}

func TestRunCPU(t *testing.T) {
	cfg := smallConfig()
	steps, sum := record(t, cfg, 2)
	if len(steps) != cfg.Steps || sum.Steps != cfg.Steps {
		t.Fatalf("%d steps recorded, summary says %d, want %d", len(steps), sum.Steps, cfg.Steps)
	}
	if sum.Engine != "cpu" || len(sum.Devices) == 0 || sum.StepsPerSecond <= 0 || sum.Min > sum.Median || sum.Median > sum.Max {
		t.Errorf("summary %+v", sum)
	}
	wantReplaced := int(math.Round(cfg.Replace * float64(cfg.Obs)))
	for k, r := range steps {
		s := r.step
		if s.N != k+1 || s.Time != float64(k)*cfg.Dt || s.Result == nil || len(r.obs) != cfg.Obs || len(r.ref) != cfg.Ref {
			t.Fatalf("step %d: N %d, time %v, %d obs, %d refs", k+1, s.N, s.Time, len(r.obs), len(r.ref))
		}
		if k == 0 {
			if s.Replaced != 0 || s.Changed != 0 || s.ChangedFraction != 0 {
				t.Errorf("step 1: replaced %d changed %d (%v)", s.Replaced, s.Changed, s.ChangedFraction)
			}
			continue
		}
		prev := steps[k-1]
		// The references moved by speed*dt; count replaced and changed
		// observations independently.
		for j := range r.ref {
			d := validate.HaversineMetres(prev.ref[j], r.ref[j])
			if d < cfg.MinSpeed*cfg.Dt*(1-1e-6) || d > cfg.MaxSpeed*cfg.Dt*(1+1e-6) {
				t.Fatalf("step %d: reference %d moved %.3f m", s.N, j, d)
			}
		}
		replaced, changed := 0, 0
		for i := range r.obs {
			if r.obs[i] != prev.obs[i] {
				replaced++
			} else if r.index[i] != prev.index[i] {
				changed++
			}
		}
		if s.Replaced != wantReplaced || replaced != wantReplaced {
			t.Errorf("step %d: Replaced %d, %d observations differ, want %d", s.N, s.Replaced, replaced, wantReplaced)
		}
		if s.Changed != changed || s.ChangedFraction != float64(changed)/float64(cfg.Obs-wantReplaced) {
			t.Errorf("step %d: Changed %d (%v), counted %d", s.N, s.Changed, s.ChangedFraction, changed)
		}
		if changed == 0 {
			t.Errorf("step %d: no nearest reference changed", s.N)
		}
	}
	last := steps[len(steps)-1]
	rep, err := validate.Exact(context.Background(), last.obs, last.ref, last.index, last.step.Result.DistanceRad)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("last step: %s %v", rep, rep.Failures)
	}
}

// The same seed gives the same simulation, whatever the number of cores;
// another seed another one.
func TestRunDeterminism(t *testing.T) {
	cfg := smallConfig()
	cfg.Obs, cfg.Steps = 2*sphere.BlockSize+17, 3
	cfg.ObsGen = "clustered"
	a, _ := record(t, cfg, 1)
	b, _ := record(t, cfg, 3)
	for k := range a {
		if !slices.Equal(a[k].obs, b[k].obs) || !slices.Equal(a[k].ref, b[k].ref) || !slices.Equal(a[k].index, b[k].index) {
			t.Fatalf("step %d differs between 1 and 3 workers", k+1)
		}
		if a[k].step.Changed != b[k].step.Changed {
			t.Fatalf("step %d: changed %d and %d", k+1, a[k].step.Changed, b[k].step.Changed)
		}
	}
	cfg.Seed++
	c, _ := record(t, cfg, 2)
	if slices.Equal(a[2].ref, c[2].ref) {
		t.Error("seeds 5 and 6 give the same references")
	}
}

// Step 1 is the query `knn run` asks: observations from Seed, references
// from Seed+1.
func TestRunFirstStepIsGenerated(t *testing.T) {
	cfg := smallConfig()
	cfg.Steps = 1
	steps, _ := record(t, cfg, 2)
	if want := sphere.Sphere(cfg.Obs, cfg.Seed); !slices.Equal(steps[0].obs, want) {
		t.Error("observations are not Sphere(Obs, Seed)")
	}
	if want := sphere.Clustered(cfg.Ref, cfg.Seed+1, sphere.DefaultClusters, sphere.DefaultSpreadKm); !slices.Equal(steps[0].ref, want) {
		t.Error("references are not Clustered(Ref, Seed+1)")
	}
}

func TestRunInitialPoints(t *testing.T) {
	obsLat, obsLon := []float64{0, 0.5, -0.5}, []float64{0, 1, -1}
	refLat, refLon := []float32{0.1, -0.4}, []float32{0.2, -1}
	cfg := Config{
		InitObs: geoknn.Radians64(obsLat, obsLon), InitRef: geoknn.Radians32(refLat, refLon),
		Steps: 3, Dt: 60, MaxSpeed: 0, Options: geoknn.Options{Engine: geoknn.CPU},
	}
	steps, _ := record(t, cfg, 1)
	for _, s := range steps {
		if !slices.Equal(s.index, []uint32{0, 0, 1}) {
			t.Errorf("step %d: %v", s.step.N, s.index)
		}
	}
	if obsLat[1] != 0.5 || refLat[0] != 0.1 {
		t.Error("initial points modified")
	}
	cfg.Obs = 4
	if _, err := Run(context.Background(), cfg, nil); err == nil {
		t.Error("Obs 4 with 3 initial observations: no error")
	}
}

func TestRunCancel(t *testing.T) {
	cfg := smallConfig()
	cfg.Steps = 1000
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	sum, err := Run(ctx, cfg, func(s Step) error {
		if s.N == 3 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if sum.Steps != 3 || time.Since(start) > 5*time.Second {
		t.Errorf("stopped after %d steps, %v", sum.Steps, time.Since(start))
	}
	stop := errors.New("enough")
	sum, err = Run(context.Background(), cfg, func(s Step) error {
		if s.N == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || sum.Steps != 2 {
		t.Errorf("callback error: %v after %d steps", err, sum.Steps)
	}
}

func TestConfigErrors(t *testing.T) {
	for name, mod := range map[string]func(*Config){
		"no steps":        func(c *Config) { c.Steps = 0 },
		"negative obs":    func(c *Config) { c.Obs = -1 },
		"no refs":         func(c *Config) { c.Ref = 0 },
		"bad obs gen":     func(c *Config) { c.ObsGen = "grid" },
		"bad ref gen":     func(c *Config) { c.RefGen = "Sphere" },
		"NaN dt":          func(c *Config) { c.Dt = math.NaN() },
		"negative speed":  func(c *Config) { c.MinSpeed = -1 },
		"min above max":   func(c *Config) { c.MinSpeed, c.MaxSpeed = 10, 5 },
		"replace above 1": func(c *Config) { c.Replace = 1.5 },
		"replace NaN":     func(c *Config) { c.Replace = math.NaN() },
		"bad init":        func(c *Config) { c.InitRef = geoknn.Radians64([]float64{3}, []float64{0}) },
		"seed on the CPU": func(c *Config) { c.Options.Algorithm = geoknn.Seed },
	} {
		cfg := smallConfig()
		mod(&cfg)
		called := false
		if _, err := Run(context.Background(), cfg, func(Step) error { called = true; return nil }); err == nil || called {
			t.Errorf("%s: err %v, callback called %v", name, err, called)
		}
	}
}
