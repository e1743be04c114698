package geoknn_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/geoknn/geoknn"
)

// An index made by Replaced answers as a fresh index of its references
// does, large and small queries, while its parent still answers against
// the old ones, from several goroutines at once; the engine outlives
// whichever is closed first.
func TestReplacedAnswersAsFresh(t *testing.T) {
	ctx := context.Background()
	ref1, _ := geoknn.Generated(geoknn.UniformSphere, 5000, 1)
	ref2, _ := geoknn.Generated(geoknn.UniformSphere, 7000, 2)
	obs, _ := geoknn.Generated(geoknn.UniformSphere, 2000, 3)
	opts := geoknn.Options{Engine: geoknn.CPU, CPUWorkers: 2}
	want := func(ref geoknn.Points) *geoknn.Result {
		r, err := geoknn.Nearest(ctx, obs, ref, opts)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	want1, want2 := want(ref1), want(ref2)
	x1, err := geoknn.NewIndex(ref1, opts)
	if err != nil {
		t.Fatal(err)
	}
	x2, err := x1.Replaced(ref2)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			x, w := x1, want1
			if g%2 == 1 {
				x, w = x2, want2
			}
			for _, n := range []int{obs.Len(), 1, 100} {
				r, err := x.Nearest(ctx, obs.Slice(0, n))
				if err != nil {
					t.Error(err)
					return
				}
				if !slices.Equal(r.Index, w.Index[:n]) || !slices.Equal(r.DistanceRad, w.DistanceRad[:n]) {
					t.Errorf("goroutine %d, %d points: answers differ from a fresh index's", g, n)
				}
			}
		})
	}
	wg.Wait()
	if err := x1.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := x1.Nearest(ctx, obs); !errors.Is(err, geoknn.ErrClosed) {
		t.Fatalf("closed index answered: %v", err)
	}
	if _, err := x1.Replaced(ref2); !errors.Is(err, geoknn.ErrClosed) {
		t.Fatalf("closed index replaced: %v", err)
	}
	r, err := x2.Nearest(ctx, obs)
	if err != nil || !slices.Equal(r.Index, want2.Index) {
		t.Fatalf("after its parent closed: %v", err)
	}
	x3, err := x2.Replaced(ref1)
	if err != nil {
		t.Fatal(err)
	}
	if err := x2.Close(); err != nil {
		t.Fatal(err)
	}
	if r, err = x3.Nearest(ctx, obs); err != nil || !slices.Equal(r.Index, want1.Index) {
		t.Fatalf("third version: %v", err)
	}
	if err := errors.Join(x3.Close(), x3.Close()); err != nil {
		t.Fatal(err)
	}
}
