package geoknn_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/paulmach/orb"

	"github.com/geoknn/geoknn"
)

// Paris, London and Tokyo, and four airports (lon, lat).
var (
	exampleCities   = []orb.Point{{2.3522, 48.8566}, {-0.1276, 51.5072}, {139.6917, 35.6895}}
	exampleAirports = []orb.Point{{2.5479, 49.0097}, {-0.4543, 51.4700}, {139.7798, 35.5494}, {140.3929, 35.7720}}
)

// For every city, the airports within 100 km, nearest first.
func ExampleSearcher_WithinList() {
	obs, _ := geoknn.Degrees(exampleCities)
	ref, _ := geoknn.Degrees(exampleAirports)
	s, err := geoknn.NewSearcher(geoknn.Options{Engine: geoknn.CPU})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	res, err := s.WithinList(context.Background(), obs, ref, 100e3)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range exampleCities {
		fmt.Printf("city %d: %d airports:", i, res.Counts[i])
		for j := res.Offsets[i]; j < res.Offsets[i+1]; j++ {
			fmt.Printf(" %d (%.1f km)", res.Index[j], res.Metres(int(j))/1000)
		}
		fmt.Println()
	}
	// Output:
	// city 0: 1 airports: 0 (22.2 km)
	// city 1: 1 airports: 1 (23.0 km)
	// city 2: 2 airports: 2 (17.5 km) 3 (64.0 km)
}

// Every call after Close, a nil context and a nil result are errors, never
// panics.
func TestMisuseIsAnError(t *testing.T) {
	obs, _ := geoknn.Degrees(exampleCities)
	ref, _ := geoknn.Degrees(exampleAirports)
	s, err := geoknn.NewSearcher(geoknn.Options{Engine: geoknn.CPU})
	if err != nil {
		t.Fatal(err)
	}
	x, err := geoknn.NewIndex(ref, geoknn.Options{Engine: geoknn.CPU})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := s.NewSession(obs)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var nilCtx context.Context
	for name, err := range map[string]error{
		"NearestInto nil result":       s.NearestInto(ctx, obs, ref, nil),
		"KNearestInto nil result":      s.KNearestInto(ctx, obs, ref, 0, nil),
		"Index.NearestInto nil result": x.NearestInto(ctx, obs, nil),
		"Index.KNearestInto nil":       x.KNearestInto(ctx, obs, 0, nil),
		"Nearest nil ctx":              s.NearestInto(nilCtx, obs, ref, &geoknn.Result{}),
		"Index.Nearest nil ctx":        x.NearestInto(nilCtx, obs, &geoknn.Result{}),
		"Session nil ctx":              sess.Replace(nilCtx, []uint32{0}, obs.Slice(0, 1)),
		"PinResult nil":                pinErr(s.PinResult(nil)),
		"PinKResult nil":               pinErr(s.PinKResult(nil)),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	checkClosed(t, s, x, sess, obs, ref)
	if s.Close() != nil || x.Close() != nil || sess.Close() != nil {
		t.Error("a second Close failed")
	}
}

// pinErr is a Pin call's error.
func pinErr(_ func() error, err error) error { return err }

func checkClosed(t *testing.T, s *geoknn.Searcher, x *geoknn.Index, sess *geoknn.Session, obs, ref geoknn.Points) {
	ctx := context.Background()
	_, err1 := s.Nearest(ctx, obs, ref)
	_, err2 := s.KNearest(ctx, obs, ref, 1, 0)
	_, err3 := s.WithinCount(ctx, obs, ref, 1e3)
	_, err4 := x.Nearest(ctx, obs)
	_, err5 := x.WithinList(ctx, obs, 1e3)
	_, err6 := sess.Nearest(ctx, ref, nil)
	_, err7 := s.NewSession(obs)
	err8 := pinErr(s.Pin(obs))
	err9 := pinErr(s.PinResult(&geoknn.Result{}))
	for i, err := range []error{err1, err2, err3, err4, err5, err6, err7, err8, err9} {
		if !errors.Is(err, geoknn.ErrClosed) {
			t.Errorf("call %d after Close: %v, want ErrClosed", i+1, err)
		}
	}
}

// k above the number of references is refused with both named, by the
// Searcher and the Index alike.
func TestKAboveReferences(t *testing.T) {
	obs, _ := geoknn.Degrees(exampleCities)
	ref, _ := geoknn.Degrees(exampleAirports)
	s, err := geoknn.NewSearcher(geoknn.Options{Engine: geoknn.CPU})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	x, err := geoknn.NewIndex(ref, geoknn.Options{Engine: geoknn.CPU})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	_, err1 := s.KNearest(context.Background(), obs, ref, 5, 0)
	_, err2 := x.KNearest(context.Background(), obs, 5, 0)
	for _, err := range []error{err1, err2, geoknn.CheckK(5, 4)} {
		if err == nil || !strings.Contains(err.Error(), "k = 5 is more than the 4 references") {
			t.Errorf("k = 5 of 4 references: %v", err)
		}
	}
	if err := geoknn.CheckK(0, 4); err == nil {
		t.Error("k = 0: no error")
	}
}

// Engine is the engine a searcher runs on, as a type.
func TestEngineIsTyped(t *testing.T) {
	s, err := geoknn.NewSearcher(geoknn.Options{Engine: geoknn.CPU})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Engine() != geoknn.CPU || s.Engine().String() != "cpu" {
		t.Errorf("Engine() = %v", s.Engine())
	}
	for _, g := range []geoknn.Generator{geoknn.UniformSphere, geoknn.UniformDegrees} {
		if back, err := geoknn.ParseGenerator(g.String()); err != nil || back != g {
			t.Errorf("ParseGenerator(%q) = %v, %v", g, back, err)
		}
	}
	if _, err := geoknn.Generated(geoknn.Generator(7), 10, 1); err == nil {
		t.Error("Generated of an unknown generator: no error")
	}
}
