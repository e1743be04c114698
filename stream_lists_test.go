package geoknn

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/formats"
	"github.com/geoknn/geoknn/stream"
)

// Radius lists larger than the stream's window are found a window of
// observations at a time as each chunk is written, and come out as the
// in-memory lists do, with and without each observation's own index
// (#41 C4: a huge radius asked for more than memory).
func TestStreamListsWindowed(t *testing.T) {
	ctx := context.Background()
	var b strings.Builder
	b.WriteString("lat,lon\n")
	for i := range 400 {
		fmt.Fprintf(&b, "%g,%g\n", float64(i%170)-85+0.1, float64(i*7%360)-180+0.3)
	}
	text := b.String()
	whole, _, err := formats.ReadReaderIDs(ctx, strings.NewReader(text), "pts", pointio.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pts, _ := Degrees(whole)
	x, err := NewIndex(pts, Options{Engine: CPU})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	const metres, window = 3e6, 500
	defer func(f func() int64) { listWindowBudget = f }(listWindowBudget)
	listWindowBudget = func() int64 { return window }
	for _, self := range []bool{false, true} {
		want, err := x.WithinList(ctx, pts, metres)
		if err != nil {
			t.Fatal(err)
		}
		if self {
			want = want.WithoutSelf()
		}
		if len(want.Index) < 10*window {
			t.Fatalf("%d entries: the test wants lists far beyond the window", len(want.Index))
		}
		var got []uint32
		src := formats.OpenTextChunks(strings.NewReader(text), "pts", pointio.ReadOptions{}, 128)
		_, err = x.Stream(ctx, src, func(c stream.Chunk, a stream.Answers) error {
			for i := range a.N {
				for r := range a.Within.Count(i) {
					ref, _ := a.Within.Ref(i, r)
					got = append(got, ref)
				}
			}
			return nil
		}, StreamQuery{RadiusMetres: metres, List: true, ExcludeSelf: self})
		src.Close()
		if err != nil || !slices.Equal(got, want.Index) {
			t.Errorf("self %v: %v; %d entries, want %d, equal %v", self, err, len(got), len(want.Index), slices.Equal(got, want.Index))
		}
	}
}

// A window holds at most its share of the entries (one observation's
// list at least), a chunk whose lists fit is answered whole, and the
// lists read from several goroutines at once (as the CSV writer reads
// them) are the in-memory lists.
func TestListWindowsBounded(t *testing.T) {
	ctx := context.Background()
	pts, _ := Generated(UniformSphere, 600, 5)
	x, err := NewIndex(pts, Options{Engine: CPU})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	q := StreamQuery{RadiusMetres: 4e6, List: true}
	self := func(j int) uint32 { return uint32(j) }
	_, _, lists, err := x.withinChunk(ctx, q.Query(), pts, self, 1<<40)
	if err != nil || lists != nil {
		t.Fatalf("a chunk that fits: lists %v, err %v", lists, err)
	}
	a, _, lists, err := x.withinChunk(ctx, q.Query(), pts, self, 600)
	if err != nil || lists == nil {
		t.Fatalf("a chunk beyond the window: lists %v, err %v", lists, err)
	}
	share := 600 / keptWindows()
	for k := range len(lists.cuts) - 1 {
		lo, hi, n := lists.cuts[k], lists.cuts[k+1], 0
		for i := lo; i < hi; i++ {
			n += a.Within.Count(i)
		}
		if n > share && hi-lo > 1 {
			t.Fatalf("observations [%d, %d): %d entries in a window of %d", lo, hi, n, share)
		}
	}
	want, _ := x.WithinList(ctx, pts, q.RadiusMetres)
	got := make([][]uint32, 4)
	var wg sync.WaitGroup
	for g := range got {
		wg.Go(func() {
			for i := g * 150; i < (g+1)*150; i++ {
				for r := range a.Within.Count(i) {
					ref, _ := a.Within.Ref(i, r)
					got[g] = append(got[g], ref)
				}
			}
		})
	}
	wg.Wait()
	if all := slices.Concat(got...); lists.failed() != nil || !slices.Equal(all, want.Index) || len(lists.cuts) < 5 {
		t.Errorf("%d windows, err %v: %d entries read side by side, want %d", len(lists.cuts)-1, lists.failed(), len(all), len(want.Index))
	}
}
