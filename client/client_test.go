package client_test

import (
	"context"
	"math"
	"net/http/httptest"
	"testing"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/client"
	"github.com/geoknn/geoknn/internal/serve"
)

// TestExampleAnswers: the example's question, asked of a server in this
// process holding its three depots, gets the answer the example shows.
func TestExampleAnswers(t *testing.T) {
	deg := math.Pi / 180
	latRad := []float64{51.5074 * deg, 48.8566 * deg, 52.5200 * deg}
	lonRad := []float64{-0.1278 * deg, 2.3522 * deg, 13.4050 * deg}
	open := func(p geoknn.Points) (*geoknn.Index, error) {
		return geoknn.NewIndex(p, geoknn.Options{Engine: geoknn.CPU})
	}
	s, err := serve.New(context.Background(), serve.Config{Open: open, LatRad: latRad, LonRad: lonRad,
		IDs: []string{"london", "paris", "berlin"}, Engine: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()
	near, err := client.New(hs.URL).Nearest(context.Background(), []float64{50.85, 52.37}, []float64{4.35, 4.90})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id string
		km float64
	}{{"paris", 264}, {"london", 358}}
	for i, w := range want {
		if near.ID[i] != w.id || math.Round(near.DistanceM[i]/1000) != w.km || near.Version != 1 {
			t.Fatalf("point %d: %s %.0f km version %d, want %s %.0f km version 1", i, near.ID[i], near.DistanceM[i]/1000, near.Version, w.id, w.km)
		}
	}
}
