package cpu

import (
	"context"
	"slices"
	"testing"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/enginetest"
)

// Warm keeps the face cells a large nearest query on the prepared
// references would build, the query then finds them, and the answers are
// the ones without Warm.
func TestWarmKeepsFaceCells(t *testing.T) {
	ref, obs := enginetest.SpherePoints(20000, 41), enginetest.SpherePoints(1<<15, 42)
	x, err := NewCPUIndex(ref)
	if err != nil {
		t.Fatal(err)
	}
	prepared := x.Prepared() // kept cells are known by this pointer
	req := engine.Request{Obs: obs, Ref: ref, Algorithm: engine.Grid, Prepared: prepared}
	cold, warm := NewCPU(2), NewCPU(2)
	defer cold.Close()
	defer warm.Close()
	if err := warm.Warm(context.Background(), engine.Request{Ref: ref, Algorithm: engine.Grid, Prepared: prepared}); err != nil {
		t.Fatal(err)
	}
	kept := warm.kept.fc
	if warm.kept.prepared != prepared || kept == nil {
		t.Fatal("Warm kept no face cells")
	}
	want, got := enginetest.NewResult(obs.Len()), enginetest.NewResult(obs.Len())
	if _, err := cold.Nearest(context.Background(), req, want); err != nil {
		t.Fatal(err)
	}
	if _, err := warm.Nearest(context.Background(), req, got); err != nil {
		t.Fatal(err)
	}
	if warm.kept.fc != kept {
		t.Error("the query built its face cells again")
	}
	if !slices.Equal(got.Index, want.Index) || !slices.Equal(got.Distance, want.Distance) {
		t.Error("answers differ after Warm")
	}
	if err := warm.Warm(context.Background(), engine.Request{Ref: ref, Algorithm: engine.Brute, Prepared: prepared}); err != nil {
		t.Error(err)
	}
}
