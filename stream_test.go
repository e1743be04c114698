package geoknn_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/paulmach/orb"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/csvio"
	"github.com/geoknn/geoknn/pointio/formats"
	"github.com/geoknn/geoknn/stream"
)

// Observations streamed from a CSV reader, two a chunk, answered against
// a prepared index and written as CSV while the next chunks are read.
func ExampleIndex_Stream() {
	airports, _ := geoknn.Degrees([]orb.Point{{8.5492, 47.4582}, {7.5299, 47.59}, {-0.4543, 51.47}})
	x, err := geoknn.NewIndex(airports, geoknn.Options{Engine: geoknn.CPU})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer x.Close()
	cities := "city,lat,lon\nZürich,47.3769,8.5417\nBasel,47.5596,7.5886\nLondon,51.5072,-0.1276\n"
	src := formats.OpenTextChunks(strings.NewReader(cities), "cities", pointio.ReadOptions{}, 2)
	defer src.Close()
	out := bufio.NewWriter(os.Stdout)
	w, _ := csvio.NewAnswerWriter(out, stream.KindNearest, 0)
	st, err := x.Stream(context.Background(), src, geoknn.WriterSink(w), geoknn.StreamQuery{})
	if err != nil {
		w.Abort()
		fmt.Println(err)
		return
	}
	w.Close()
	fmt.Printf("%d observations in %d chunks\n", st.Rows, st.Chunks)
	// Output:
	// obs_index,ref_index,distance_m
	// 0,0,9057.755
	// 1,1,5551.261
	// 2,2,22995.095
	// 3 observations in 2 chunks
}

// csvPoints is n points as CSV, row bad (0-based) holding latitude 91.
func csvPoints(n, bad int) string {
	var b strings.Builder
	b.WriteString("lat,lon\n")
	for i := range n {
		lat := float64(i%170) - 85
		if i == bad {
			lat = 91
		}
		fmt.Fprintf(&b, "%g,%g\n", lat, float64(i%360)-180+0.25)
	}
	return b.String()
}

// A stream answers as the in-memory calls do, chunk by chunk in order,
// for every query kind.
func TestStreamAsInMemory(t *testing.T) {
	ctx := context.Background()
	ref, _ := geoknn.Generated(geoknn.UniformSphere, 300, 3)
	lat, lon := make([]float64, 300), make([]float64, 300)
	for i := range lat {
		lat[i], lon[i] = ref.At(i)
	}
	ref = geoknn.Radians64(lat, lon)
	x, err := geoknn.NewIndex(ref, geoknn.Options{Engine: geoknn.CPU})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	text := csvPoints(1000, -1)
	whole, _, err := formats.ReadReaderIDs(ctx, strings.NewReader(text), "pts", pointio.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	obs, _ := geoknn.Degrees(whole)
	want, _ := x.KNearest(ctx, obs, 3, 0)
	var got []uint32
	next := 0
	src := formats.OpenTextChunks(strings.NewReader(text), "pts", pointio.ReadOptions{}, 128)
	defer src.Close()
	st, err := x.Stream(ctx, src, func(c stream.Chunk, a stream.Answers) error {
		if a.Base != next || int(c.Base) != next || a.N != c.Len() {
			return fmt.Errorf("chunk at %d (%d), want %d", a.Base, c.Base, next)
		}
		next += a.N
		for i := range a.N {
			for r := range 3 {
				ref, _, _ := a.KRow(i, r)
				got = append(got, ref)
			}
		}
		return nil
	}, geoknn.StreamQuery{K: 3})
	if err != nil || !slices.Equal(got, want.Index) || st.Rows != 1000 || st.Chunks < 2 {
		t.Errorf("stream: %v, %d rows in %d chunks, answers equal %v", err, st.Rows, st.Chunks, slices.Equal(got, want.Index))
	}
}

// A bad row in a late chunk stops the stream with the reader's error
// (naming the input and line): no chunk from it on reaches the sink, and
// a bad query is refused before any chunk is read.
func TestStreamStopsAtBadChunk(t *testing.T) {
	ctx := context.Background()
	ref, _ := geoknn.Degrees([]orb.Point{{0, 0}, {10, 10}})
	x, err := geoknn.NewIndex(ref, geoknn.Options{Engine: geoknn.CPU})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	src := formats.OpenTextChunks(strings.NewReader(csvPoints(4000, 3500)), "pts.csv", pointio.ReadOptions{}, 100)
	defer src.Close()
	last := 0
	_, err = x.Stream(ctx, src, func(c stream.Chunk, a stream.Answers) error {
		last = a.Base + a.N
		return nil
	}, geoknn.StreamQuery{})
	var in *pointio.InputError
	if !errors.As(err, &in) || !strings.Contains(err.Error(), "pts.csv") || !strings.Contains(err.Error(), "3502") || last > 3501 {
		t.Errorf("error %v; answers written up to row %d", err, last)
	}
	_, err = x.Stream(ctx, src, func(stream.Chunk, stream.Answers) error { return nil }, geoknn.StreamQuery{K: 3})
	if err == nil || !strings.Contains(err.Error(), "k = 3 is more than the 2 references") {
		t.Errorf("k above the references: %v", err)
	}
}

// An Index's queries large enough to sort by cell share face cells built
// once: each chunk of a stream still answers as brute force does.
func TestIndexKeptFaceCells(t *testing.T) {
	ctx := context.Background()
	ref, _ := geoknn.Generated(geoknn.UniformSphere, 1<<12, 5)
	lat, lon := make([]float64, ref.Len()), make([]float64, ref.Len())
	for i := range lat {
		lat[i], lon[i] = ref.At(i)
	}
	ref = geoknn.Radians64(lat, lon)
	x, err := geoknn.NewIndex(ref, geoknn.Options{Engine: geoknn.CPU})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	brute, _ := geoknn.NewSearcher(geoknn.Options{Engine: geoknn.CPU, Algorithm: geoknn.Brute})
	defer brute.Close()
	for seed := range uint64(3) {
		obs, _ := geoknn.Generated(geoknn.UniformSphere, 1<<15+int(seed)*1000, 10+seed)
		got, err1 := x.Nearest(ctx, obs)
		want, err2 := brute.Nearest(ctx, obs, ref)
		if err1 != nil || err2 != nil || !slices.Equal(got.Index, want.Index) || !strings.HasPrefix(got.Stats.Note, "face cells") {
			t.Errorf("query %d: %v %v, note %q, equal %v", seed, err1, err2, got.Stats.Note, slices.Equal(got.Index, want.Index))
		}
	}
}
