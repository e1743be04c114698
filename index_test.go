package geoknn_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/geoknn/geoknn"
	"github.com/golang/geo/s1"
	"github.com/golang/geo/s2"
	"github.com/paulmach/orb"
)

// Small queries (on the calling goroutine) and large ones (the engine)
// answer alike, also from many goroutines at once.
func TestIndexAnswersAsTheSearcher(t *testing.T) {
	ctx := context.Background()
	ref, _ := geoknn.Generated(geoknn.UniformSphere, 20000, 7)
	obs, _ := geoknn.Generated(geoknn.UniformSphere, 3000, 8)
	x, err := geoknn.NewIndex(ref, geoknn.Options{Engine: geoknn.CPU})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	big, err := x.Nearest(ctx, obs)
	if err != nil {
		t.Fatal(err)
	}
	bigK, err := x.KNearest(ctx, obs, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := g; i < obs.Len(); i += 40 {
				one := obs.Slice(i, i+1)
				r, err := x.Nearest(ctx, one)
				k, kerr := x.KNearest(ctx, one, 4, 0)
				if err != nil || kerr != nil || r.Index[0] != big.Index[i] || !slices.Equal(k.Index, bigK.Index[4*i:4*i+4]) {
					t.Errorf("observation %d: %v %v %v / %v %v", i, err, kerr, r.Index, big.Index[i], k.Index)
					return
				}
			}
		})
	}
	wg.Wait()
	w, err := x.WithinList(ctx, obs.Slice(0, 100), 500e3)
	wBig, err2 := x.WithinList(ctx, obs, 500e3)
	if err != nil || err2 != nil || !slices.Equal(w.Counts, wBig.Counts[:100]) || !slices.Equal(w.Index, wBig.Index[:wBig.Offsets[100]]) {
		t.Errorf("within: %v %v", err, err2)
	}
}

// One observation against a built index of 2^16 references.
func BenchmarkIndexOnePoint(b *testing.B) {
	ref, _ := geoknn.Generated(geoknn.UniformSphere, 1<<16, 1)
	obs, _ := geoknn.Generated(geoknn.UniformSphere, 1<<12, 2)
	x, err := geoknn.NewIndex(ref, geoknn.Options{Engine: geoknn.CPU})
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := x.Nearest(ctx, obs.Slice(i%4096, i%4096+1)); err != nil {
			b.Fatal(err)
		}
	}
}

// The same query on s2 (github.com/golang/geo): a ShapeIndex over a
// PointVector of the same 2^16 references, queried by a closest-edge query
// with one result, the s2 way of asking for the closest point.
func BenchmarkS2ClosestPoint(b *testing.B) {
	ref, _ := geoknn.Generated(geoknn.UniformSphere, 1<<16, 1)
	obs, _ := geoknn.Generated(geoknn.UniformSphere, 1<<12, 2)
	q := s2ClosestQuery(ref)
	targets := make([]s2.Point, obs.Len())
	for i := range targets {
		targets[i] = s2Point(obs, i)
	}
	q.FindEdges(s2.NewMinDistanceToPointTarget(targets[0])) // builds the index
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if r := q.FindEdges(s2.NewMinDistanceToPointTarget(targets[i%len(targets)])); len(r) != 1 {
			b.Fatal("no closest point")
		}
	}
}

// s2ClosestQuery is s2's closest-point query over ref: a PointVector
// shape in a ShapeIndex, asked for one result.
func s2ClosestQuery(ref geoknn.Points) *s2.EdgeQuery {
	pv := make(s2.PointVector, ref.Len())
	for i := range pv {
		pv[i] = s2Point(ref, i)
	}
	index := s2.NewShapeIndex()
	index.Add(&pv)
	return s2.NewClosestEdgeQuery(index, s2.NewClosestEdgeQueryOptions().MaxResults(1))
}

func s2Point(p geoknn.Points, i int) s2.Point {
	lat, lon := p.At(i)
	return s2.PointFromLatLng(s2.LatLng{Lat: s1.Angle(lat), Lng: s1.Angle(lon)})
}

// s2 finds the same nearest references (away from exact ties).
func TestIndexAgreesWithS2(t *testing.T) {
	ref, _ := geoknn.Generated(geoknn.UniformSphere, 5000, 1)
	obs, _ := geoknn.Generated(geoknn.UniformSphere, 500, 2)
	q := s2ClosestQuery(ref)
	x, err := geoknn.NewIndex(ref, geoknn.Options{Engine: geoknn.CPU})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	res, err := x.Nearest(context.Background(), obs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range obs.Len() {
		lat, lon := obs.At(i)
		r := q.FindEdges(s2.NewMinDistanceToPointTarget(s2.PointFromLatLng(s2.LatLng{Lat: s1.Angle(lat), Lng: s1.Angle(lon)})))
		if len(r) != 1 || uint32(r[0].EdgeID()) != res.Index[i] {
			t.Errorf("observation %d: s2 %v, geoknn %d", i, r, res.Index[i])
		}
	}
}

// The engine that opts picks (the GPUs where there are) answers k nearest
// and radius queries exactly as the CPU engine does.
func TestKNearestAndWithinOnEveryEngine(t *testing.T) {
	ctx := context.Background()
	ref, _ := geoknn.Generated(geoknn.UniformSphere, 4000, 3)
	obs, _ := geoknn.Generated(geoknn.UniformDegrees, 2000, 4)
	cpu, _ := geoknn.NewSearcher(geoknn.Options{Engine: geoknn.CPU, Algorithm: geoknn.Brute})
	defer cpu.Close()
	auto, err := geoknn.NewSearcher(geoknn.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer auto.Close()
	want, err1 := cpu.KNearest(ctx, obs, ref, 8, 0)
	got, err2 := auto.KNearest(ctx, obs, ref, 8, 0)
	if err1 != nil || err2 != nil || !slices.Equal(want.Index, got.Index) {
		t.Errorf("k nearest on the %s engine: %v %v", auto.Engine(), err1, err2)
	}
	w1, err1 := cpu.WithinList(ctx, obs, ref, 200e3)
	w2, err2 := auto.WithinList(ctx, obs, ref, 200e3)
	if err1 != nil || err2 != nil || !slices.Equal(w1.Index, w2.Index) || !slices.Equal(w1.Counts, w2.Counts) {
		t.Errorf("within on the %s engine: %v %v", auto.Engine(), err1, err2)
	}
}

// A reference index built once and asked point by point, as a service
// would: each small query is answered on the calling goroutine, in about a
// microsecond.
func ExampleIndex() {
	airports, _ := geoknn.Degrees([]orb.Point{{8.5492, 47.4582}, {7.5299, 47.59}, {9.0, 46.0}, {8.6, 47.45}})
	x, err := geoknn.NewIndex(airports, geoknn.Options{Engine: geoknn.CPU})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer x.Close()
	for _, city := range []orb.Point{{8.5417, 47.3769}, {7.5886, 47.5596}} {
		p, _ := geoknn.Degrees([]orb.Point{city})
		res, err := x.KNearest(context.Background(), p, 2, 0)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%v: airports %d and %d, %.1f and %.1f km\n", city, res.Index[0], res.Index[1], res.Metres(0, 0)/1000, res.Metres(0, 1)/1000)
	}
	// Output:
	// [8.5417 47.3769]: airports 0 and 3, 9.1 and 9.2 km
	// [7.5886 47.5596]: airports 1 and 0, 5.6 and 73.0 km
}

// References prepared while the engine opens (on GPUs, 0.5-1 s of driver
// start): the Index is ready as soon as the engine is.
func ExampleReferences() {
	airports, _ := geoknn.Degrees([]orb.Point{{8.5492, 47.4582}, {7.5299, 47.59}, {9.0, 46.0}})
	opened := make(chan *geoknn.Searcher, 1)
	go func() {
		s, err := geoknn.NewSearcher(geoknn.Options{Engine: geoknn.CPU})
		if err != nil {
			fmt.Println(err) // s is nil
		}
		opened <- s
	}()
	refs, err := geoknn.PrepareReferences(airports)
	s := <-opened
	if s == nil {
		return
	}
	if err != nil {
		s.Close()
		fmt.Println(err)
		return
	}
	x, err := s.IndexOf(refs)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer x.Close()
	city, _ := geoknn.Degrees([]orb.Point{{7.5886, 47.5596}})
	res, err := x.Nearest(context.Background(), city)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("airport %d, %.1f km\n", res.Index[0], res.Metres(0)/1000)
	// Output:
	// airport 1, 5.6 km
}
