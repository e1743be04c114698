package cpu

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/enginetest"
	"github.com/geoknn/geoknn/internal/index"
)

// A tree query of several chunks in cell order answers as the node-by-node
// walk in input order does, through merged duplicates, and stops when
// cancelled.
func TestNearestTreeOrdered(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ref := index.Radians64(make([]float64, 5000), make([]float64, 5000))
	for i := range ref.Lat64 {
		ref.Lat64[i], ref.Lon64[i] = 0.3+rng.Float64()*1e-3, 0.2+rng.Float64()*1e-3
	}
	ref.Lat64[4000], ref.Lon64[4000] = ref.Lat64[17], ref.Lon64[17] // merged: index 17 answers for both
	obs := enginetest.SpherePoints(cellChunk+3000, 5)
	for i := range 1000 { // and observations near the cluster, where the tree's leaves matter
		obs.Lat64[i], obs.Lon64[i] = 0.3+rng.Float64()*2e-3, 0.2+rng.Float64()*2e-3
	}
	refs := index.PrepareRefs(ref)
	tree := index.BuildKDTree(refs)
	c := NewCPU(0)
	want, got := enginetest.NewResult(obs.Len()), enginetest.NewResult(obs.Len())
	req := engine.Request{Obs: obs, Ref: ref}
	if _, err := c.nearestEach(context.Background(), request{Request: req}, want, refs, tree.Nearest, time.Now()); err != nil {
		t.Fatal(err)
	}
	st, err := c.nearestTreeOrdered(context.Background(), request{Request: req}, got, refs, tree, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if st.Jobs != 2 {
		t.Errorf("%d chunks, want 2", st.Jobs)
	}
	for i := range want.Index {
		if got.Index[i] != want.Index[i] || got.Distance[i] != want.Distance[i] {
			t.Fatalf("obs %d: in cell order %d at %v, node by node %d at %v", i, got.Index[i], got.Distance[i], want.Index[i], want.Distance[i])
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.nearestTreeOrdered(ctx, request{Request: req}, got, refs, tree, time.Now()); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	// A tree of one leaf, which the packed layout refuses: the node-by-node walk answers.
	few := enginetest.SpherePoints(5, 6)
	fewRefs := index.PrepareRefs(few)
	small := obs.Slice(0, 20000)
	want, got = enginetest.NewResult(small.Len()), enginetest.NewResult(small.Len())
	if _, err := c.Nearest(context.Background(), engine.Request{Obs: small, Ref: few, Algorithm: engine.Brute}, want); err != nil {
		t.Fatal(err)
	}
	if _, err := c.nearestTreeOrdered(context.Background(), request{Request: engine.Request{Obs: small, Ref: few}}, got, fewRefs, index.BuildKDTree(fewRefs), time.Now()); err != nil {
		t.Fatal(err)
	}
	for i := range want.Index {
		if got.Index[i] != want.Index[i] || got.Distance[i] != want.Distance[i] {
			t.Fatalf("one leaf, obs %d: %d at %v, brute force %d at %v", i, got.Index[i], got.Distance[i], want.Index[i], want.Distance[i])
		}
	}
}

// The ordering key clamps points on and beyond the cube's faces.
func TestTreeOrderKey(t *testing.T) {
	last := uint32(treeOrderSide - 1)
	for _, tc := range []struct {
		x, y, z float64
		want    uint32
	}{
		{-1, -1, -1, 0},
		{1, 1, 1, (last*treeOrderSide+last)*treeOrderSide + last},
		{1.0000001, -1.0000001, 0, (last*treeOrderSide+0)*treeOrderSide + treeOrderSide/2},
	} {
		if got := treeOrderKey(tc.x, tc.y, tc.z); got != tc.want {
			t.Errorf("treeOrderKey(%v, %v, %v) = %d, want %d", tc.x, tc.y, tc.z, got, tc.want)
		}
	}
}
