package geoknn_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/stream"
)

// One Query value asks any kind of question; Answer answers it, and its
// Answers read the same whatever the kind (here the two nearest airports
// of every city, no farther than 100 km, then how many lie within 50 km).
func ExampleQuery() {
	obs, _ := geoknn.Degrees(exampleCities)
	ref, _ := geoknn.Degrees(exampleAirports)
	s, err := geoknn.NewSearcher(geoknn.Options{Engine: geoknn.CPU})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	for _, q := range []geoknn.Query{{K: 2, MaxMetres: 100e3}, {RadiusMetres: 50e3}} {
		kind, k := q.Kind()
		a, err := s.Answer(context.Background(), obs, ref, q)
		if err != nil {
			fmt.Println(err)
			return
		}
		ans := a.Answers()
		for i := range ans.N {
			switch kind {
			case stream.KindKNearest:
				for r := range k {
					if ref, m, ok := ans.KRow(i, r); ok {
						fmt.Printf("city %d: #%d airport %d at %.1f km\n", i, r+1, ref, m/1000)
					}
				}
			case stream.KindWithinCounts:
				fmt.Printf("city %d: %d airports within 50 km\n", i, ans.Within.Count(i))
			}
		}
	}
	// Output:
	// city 0: #1 airport 0 at 22.2 km
	// city 1: #1 airport 1 at 23.0 km
	// city 2: #1 airport 2 at 17.5 km
	// city 2: #2 airport 3 at 64.0 km
	// city 0: 1 airports within 50 km
	// city 1: 1 airports within 50 km
	// city 2: 1 airports within 50 km
}

// Answer gives, for every kind, what the kind's own call gives, on a
// Searcher and on an Index alike, a set against itself included.
func TestAnswerMatchesTheKindsCalls(t *testing.T) {
	ctx := context.Background()
	pts, s := airportsOnCPU(t)
	x, err := geoknn.NewIndex(pts, geoknn.Options{Engine: geoknn.CPU})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	nearest, _ := s.Nearest(ctx, pts, pts)
	k2, _ := s.KNearest(ctx, pts, pts, 3, 0)
	counts, _ := s.WithinCount(ctx, pts, pts, 100e3)
	lists, _ := s.WithinList(ctx, pts, pts, 100e3)
	spot, _ := s.WithinCount(ctx, pts, pts, 0)
	for _, c := range []struct {
		q    geoknn.Query
		want string
	}{
		{geoknn.Query{}, fmt.Sprint(nearest.Index)},
		{geoknn.Query{K: 2, ExcludeSelf: true}, fmt.Sprint(k2.WithoutSelf().Index)},
		{geoknn.Query{RadiusMetres: 100e3}, fmt.Sprint(counts.Counts)},
		{geoknn.Query{RadiusMetres: 100e3, List: true, ExcludeSelf: true}, fmt.Sprint(lists.WithoutSelf().Index)},
		{geoknn.Query{Within: true}, fmt.Sprint(spot.Counts)},
	} {
		for _, answer := range []func() (*geoknn.Answer, error){
			func() (*geoknn.Answer, error) { return s.Answer(ctx, pts, pts, c.q) },
			func() (*geoknn.Answer, error) { return x.Answer(ctx, pts, c.q) },
		} {
			a, err := answer()
			if err != nil {
				t.Fatalf("%+v: %v", c.q, err)
			}
			got := ""
			switch kind, _ := c.q.Kind(); {
			case kind != a.Kind:
				t.Errorf("%+v: kind %v, want %v", c.q, a.Kind, kind)
			case a.Nearest != nil:
				got = fmt.Sprint(a.Nearest.Index)
			case a.K != nil:
				got = fmt.Sprint(a.K.Index)
			case a.Within.Offsets != nil:
				got = fmt.Sprint(a.Within.Index)
			default:
				got = fmt.Sprint(a.Within.Counts)
			}
			if got != c.want || a.Answers().N != len(exampleAirports) {
				t.Errorf("%+v: %s (%d answers), want %s", c.q, got, a.Answers().N, c.want)
			}
		}
	}
	if err := (geoknn.Query{K: 4, ExcludeSelf: true}).Check(4); err == nil {
		t.Error("K 4 of 4 references, each less its own: no error")
	}
}

// KNearestInto fills a NewKResult in place: the answers KNearest gives, in
// the arrays it was made with.
func TestNewKResultTakesTheAnswers(t *testing.T) {
	ctx := context.Background()
	pts, s := airportsOnCPU(t)
	want, err := s.KNearest(ctx, pts, pts, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	res := geoknn.NewKResult(pts.Len(), 3)
	idx, dist := &res.Index[0], &res.DistanceRad[0]
	if err := s.KNearestInto(ctx, pts, pts, 0, res); err != nil {
		t.Fatal(err)
	}
	if &res.Index[0] != idx || &res.DistanceRad[0] != dist {
		t.Error("KNearestInto allocated anew")
	}
	if fmt.Sprint(res.Index, res.DistanceRad) != fmt.Sprint(want.Index, want.DistanceRad) {
		t.Errorf("got %v, want %v", res.Index, want.Index)
	}
	if r := geoknn.NewKResult(-1, 3); len(r.Index) != 0 {
		t.Errorf("n -1: %d entries", len(r.Index))
	}
}

// airportsOnCPU is the example airports and a CPU searcher, closed with
// the test.
func airportsOnCPU(t *testing.T) (geoknn.Points, *geoknn.Searcher) {
	pts, err := geoknn.Degrees(exampleAirports)
	if err != nil {
		t.Fatal(err)
	}
	s, err := geoknn.NewSearcher(geoknn.Options{Engine: geoknn.CPU})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return pts, s
}

// StreamQuery carries every field of Query there and back: a field added
// to one and not the other fails here.
func TestStreamQueryIsAQuery(t *testing.T) {
	q := geoknn.StreamQuery{K: 3, MaxMetres: 1, RadiusMetres: 2, Within: true, List: true, ExcludeSelf: true, Depth: 5}
	if back := q.Query().Streamed(5); back != q {
		t.Errorf("%+v came back as %+v", q, back)
	}
	kind, k := q.Query().Kind()
	if skind, sk := q.Kind(); skind != kind || sk != k {
		t.Errorf("StreamQuery.Kind %v %d, Query.Kind %v %d", skind, sk, kind, k)
	}
}
