package geoknn

import (
	"context"
	"slices"
	"testing"
)

// An Index of references prepared apart (and planned for, as a stream
// does while the GPUs open) answers as NewIndex's does, and PlanFor keeps
// one plan with them, none for another algorithm.
func TestIndexOfAnswersAsNewIndex(t *testing.T) {
	obs, ref := sphereColumns(t, 20000, 3), sphereColumns(t, 1<<16, 4)
	r, err := PrepareReferences(ref)
	if err != nil {
		t.Fatal(err)
	}
	plans := r.local.Prepared().Plans
	r.PlanFor(obs, Options{Algorithm: Brute})
	if plans.Len() != 0 {
		t.Fatalf("brute force planned: %d plans", plans.Len())
	}
	r.PlanFor(obs, Options{})
	if plans.Len() != 1 {
		t.Fatalf("%d plans kept, want 1", plans.Len())
	}
	x, err := plainCPU(t).IndexOf(r)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	got, err := x.Nearest(context.Background(), obs)
	if err != nil {
		t.Fatal(err)
	}
	want := plainNearest(t, obs, ref)
	if !slices.Equal(got.Index, want.Index) || !slices.Equal(got.DistanceRad, want.DistanceRad) {
		t.Error("answers differ from the searcher's")
	}
	if r.Len() != ref.Len() {
		t.Errorf("Len %d, want %d", r.Len(), ref.Len())
	}
}

// IndexOf refuses a closed searcher, and bad references are refused when
// prepared.
func TestIndexOfRefusals(t *testing.T) {
	r, err := PrepareReferences(sphereColumns(t, 10, 5))
	if err != nil {
		t.Fatal(err)
	}
	s := plainCPU(t)
	s.Close()
	if _, err := s.IndexOf(r); err != ErrClosed {
		t.Errorf("closed searcher: %v, want ErrClosed", err)
	}
	if _, err := PrepareReferences(Radians64([]float64{0, 3}, []float64{0, 0})); err == nil {
		t.Error("a latitude of 3 rad prepared")
	}
}
