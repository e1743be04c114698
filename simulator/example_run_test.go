package simulator_test

import (
	"context"
	"fmt"
	"math"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/simulator"
)

func ExampleRun() {
	cfg := simulator.Config{
		Obs: 10000, Ref: 64, Seed: 1, // uniform on the sphere
		Steps: 4, Dt: 3600, MaxSpeed: 250, // an hour a step, up to 900 km/h
		Replace: 0.05,                               // 5% fresh observations a step
		Options: geoknn.Options{Engine: geoknn.CPU}, // one searcher for all steps
	}
	sum, err := simulator.Run(context.Background(), cfg, func(s simulator.Step) error {
		fmt.Printf("step %d at %2.0f h: %d replaced, %d changed nearest reference\n",
			s.N, s.Time/3600, s.Replaced, s.Changed)
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sum.Steps, "steps on the", sum.Engine)
	// Output:
	// step 1 at  0 h: 0 replaced, 0 changed nearest reference
	// step 2 at  1 h: 500 replaced, 2265 changed nearest reference
	// step 3 at  2 h: 500 replaced, 1917 changed nearest reference
	// step 4 at  3 h: 500 replaced, 2000 changed nearest reference
	// 4 steps on the cpu
}

func ExamplePropagate() {
	const deg = math.Pi / 180
	// From 80°N 30°E due north for 2,000 km: over the pole and down the
	// 150°W meridian, heading south.
	lat, lon, heading := simulator.Propagate(80*deg, 30*deg, 0, 2000e3)
	fmt.Printf("%.2f° %.2f° heading %.0f°\n", lat/deg, lon/deg, math.Abs(heading/deg))
	// Output: 82.01° -150.00° heading 180°
}
