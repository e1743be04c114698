package client_test

import (
	"context"
	"fmt"
	"log"

	"github.com/geoknn/geoknn/client"
)

// A client asks a running knn serve for the nearest of its references:
// here one started with
//
//	knn serve --ref depots.csv --ref-id name
//
// on its default address, depots.csv holding name,lat,lon rows for
// London, Paris and Berlin. Every answer names the reference version it
// was computed against.
func Example() {
	c := client.New("http://127.0.0.1:8427")
	ctx := context.Background()
	near, err := c.Nearest(ctx, []float64{50.85, 52.37}, []float64{4.35, 4.90}) // Brussels, Amsterdam
	if err != nil {
		log.Fatal(err)
	}
	for i := range near.Index {
		fmt.Printf("%s %.0f km\n", near.ID[i], near.DistanceM[i]/1000)
	}
	fmt.Println("version", near.Version)
	// With the three depots:
	// paris 264 km
	// london 358 km
	// version 1
}
