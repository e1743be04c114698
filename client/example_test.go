package client_test

import (
	"context"
	"fmt"
	"math"
	"net/http/httptest"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/client"
	"github.com/geoknn/geoknn/internal/serve"
)

// A client asks a running `knn serve` for the nearest of its references
// (here a server in the same process, over loopback, holding three
// depots with ids).
func Example() {
	deg := math.Pi / 180
	latRad := []float64{51.5074 * deg, 48.8566 * deg, 52.5200 * deg}
	lonRad := []float64{-0.1278 * deg, 2.3522 * deg, 13.4050 * deg}
	open := func(p geoknn.Points) (*geoknn.Index, error) {
		return geoknn.NewIndex(p, geoknn.Options{Engine: geoknn.CPU})
	}
	s, err := serve.New(context.Background(), serve.Config{Open: open, LatRad: latRad, LonRad: lonRad,
		IDs: []string{"london", "paris", "berlin"}, Engine: "cpu"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()

	c := client.New(hs.URL)
	near, err := c.Nearest(context.Background(), []float64{50.85, 52.37}, []float64{4.35, 4.90}) // Brussels, Amsterdam
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range near.Index {
		fmt.Printf("%s %.0f km\n", near.ID[i], near.DistanceM[i]/1000)
	}
	// Output:
	// paris 264 km
	// london 358 km
}
