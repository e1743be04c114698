package validate_test

import (
	"context"
	"fmt"

	"github.com/paulmach/orb"

	"github.com/geoknn/geoknn/sphere"
	"github.com/geoknn/geoknn/validate"
)

func ExampleHaversineMetres() {
	london := orb.Point{-0.1278, 51.5074}
	paris := orb.Point{2.3522, 48.8566}
	fmt.Printf("%.1f km\n", validate.HaversineMetres(london, paris)/1000)
	fmt.Printf("%.0f m\n", validate.HaversineMetres(orb.Point{180, 0}, orb.Point{-180, 0}))
	// Output:
	// 343.6 km
	// 0 m
}

func ExampleBruteForce() {
	ref := []orb.Point{{0, 90}, {-0.1278, 51.5074}, {2.3522, 48.8566}}
	obs := []orb.Point{{1.0, 50.0}, {30, 85}}
	index, dist, err := validate.BruteForce(context.Background(), obs, ref)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range obs {
		fmt.Printf("%v -> ref %d at %.1f km\n", obs[i], index[i], dist[i]*sphere.EarthRadiusMetres/1000)
	}
	// Output:
	// [1 50] -> ref 2 at 160.4 km
	// [30 85] -> ref 0 at 556.0 km
}

func ExampleExact() {
	ref := []orb.Point{{0, 0}, {10, 0}, {20, 0}}
	obs := []orb.Point{{1, 0}, {11, 0}, {19, 0}}
	// The engine got the third observation wrong.
	index := []uint32{0, 1, 1}
	dist := []float32{
		float32(validate.Haversine(obs[0], ref[0])),
		float32(validate.Haversine(obs[1], ref[1])),
		float32(validate.Haversine(obs[2], ref[1])),
	}
	r, err := validate.Exact(context.Background(), obs, ref, index, dist)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.OK())
	fmt.Println(r)
	fmt.Println(r.Failures[0])
	// Output:
	// false
	// 3 checked: 1 wrong index, 0 wrong distance (max excess 889560.642 m, max distance error 0.028 m), 0 ties
	// observation 2: returned 1 at 1000755.722 m (reported 1000755.750 m), nearest 2 at 111195.080 m
}
