package sphere_test

import (
	"fmt"

	"github.com/geoknn/geoknn/sphere"
)

func ExampleSphere() {
	pts := sphere.Sphere(100000, 1)
	polar := 0
	for _, p := range pts {
		if p[1] > 60 || p[1] < -60 {
			polar++
		}
	}
	// 1 - sin 60° = 13.4% of a uniform sphere lies beyond 60°.
	fmt.Printf("%d points, %.0f%% beyond 60°\n", len(pts), 100*float64(polar)/float64(len(pts)))
	// Output: 100000 points, 13% beyond 60°
}

func ExampleSeedUniform() {
	pts := sphere.SeedUniform(100000, 1)
	polar := 0
	for _, p := range pts {
		if p[1] > 60 || p[1] < -60 {
			polar++
		}
	}
	// Uniform latitude crowds the poles: a third lies beyond 60°.
	fmt.Printf("%.0f%% beyond 60°\n", 100*float64(polar)/float64(len(pts)))
	// Output: 33% beyond 60°
}

func ExampleSphereRadians() {
	// Column form: no orb.Points are built, which matters at 2^27 points.
	n := 1 << 20
	lat, lon := make([]float64, n), make([]float64, n)
	if err := sphere.SphereRadians(n, 1, lat, lon); err != nil {
		fmt.Println(err)
		return
	}
	// The point form gives the same points in degrees.
	pts := sphere.Sphere(8, 1)
	fmt.Println(sphere.ToDegrees(lat[7], lon[7]) == pts[7])
	// Output: true
}

func ExampleClustered() {
	pts := sphere.Clustered(1000, 1, 4, 50)
	fmt.Println(len(pts))
	// Output: 1000
}

func ExampleByName() {
	gen, err := sphere.ByName("clustered")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(gen(10, 1)))
	_, err = sphere.ByName("grid")
	fmt.Println(err)
	// Output:
	// 10
	// sphere: unknown generator "grid" (valid: seed, sphere, clustered)
}
