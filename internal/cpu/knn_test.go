package cpu

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/enginetest"
	"github.com/geoknn/geoknn/internal/index"
)

func TestKNearestMatchesNaive(t *testing.T) { enginetest.KNearestMatchesNaive(t, NewCPU(0)) }

func TestWithinMatchesNaive(t *testing.T) { enginetest.WithinMatchesNaive(t, NewCPU(0)) }

// chordLimit decides exactly as the angle does: the limit's angle is
// within rad, the next squared chord's is not.
func TestChordLimit(t *testing.T) {
	for _, rad := range []float64{0, 1e-12, 1.5e-7, 1e-3, 0.5, 1, 2, 3, math.Pi - 1e-9} {
		d := index.ChordLimit(rad)
		if index.ChordToAngle(d) > rad || index.ChordToAngle(math.Nextafter(d, 5)) <= rad {
			t.Errorf("chordLimit(%v) = %v: angle %v, next %v", rad, d, index.ChordToAngle(d), index.ChordToAngle(math.Nextafter(d, 5)))
		}
	}
	if !math.IsInf(index.ChordLimit(math.Pi), 1) {
		t.Error("chordLimit(pi) is not +Inf")
	}
}

func TestKNearestAndWithinErrors(t *testing.T) {
	ctx, obs, ref := context.Background(), enginetest.SpherePoints(10, 1), enginetest.SpherePoints(5, 2)
	for _, k := range []int{0, 6} {
		out := engine.KResult{K: k, Index: make([]uint32, 10*max(k, 1)), Distance: make([]float32, 10*max(k, 1))}
		if _, err := NewCPU(0).KNearest(ctx, engine.Request{Obs: obs, Ref: ref}, math.Inf(1), out); err == nil {
			t.Errorf("k = %d of 5 references: no error", k)
		}
	}
	for _, rad := range []float64{-1, math.NaN(), math.Inf(1)} {
		if _, _, err := NewCPU(0).Within(ctx, engine.Request{Obs: obs, Ref: ref}, rad, false); err == nil {
			t.Errorf("radius %v: no error", rad)
		}
	}
}

// A grid side beyond the index's cells is refused, on every query kind.
func TestGridSideBound(t *testing.T) {
	req := engine.Request{Obs: enginetest.SpherePoints(10, 1), Ref: enginetest.SpherePoints(10, 2), GridSide: index.MaxGridSide + 1}
	_, err := NewCPU(0).Nearest(context.Background(), req, enginetest.NewResult(10))
	_, kerr := NewCPU(0).KNearest(context.Background(), req, math.Inf(1), engine.KResult{K: 1, Index: make([]uint32, 10), Distance: make([]float32, 10)})
	if err == nil || kerr == nil || !strings.Contains(err.Error(), "grid side") {
		t.Errorf("side %d: %v, %v", req.GridSide, err, kerr)
	}
}

func TestMaxGridSideFillsTheCells(t *testing.T) {
	if g := index.MaxGridSide; g*g*g > index.MaxGridCells || (g+1)*(g+1)*(g+1) <= index.MaxGridCells {
		t.Errorf("MaxGridSide %d does not match %d cells", g, index.MaxGridCells)
	}
}
