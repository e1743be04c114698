package index

import (
	"math"
	"testing"
)

// capPoints is n points within about a degree of (lat, lon) radians.
func capPoints(n int, lat, lon float64, seed uint64) Points {
	p := spherePoints(n, seed)
	for i := range p.Lat64 {
		p.Lat64[i] = lat + p.Lat64[i]/90
		p.Lon64[i] = lon + p.Lon64[i]/180
	}
	return p
}

// A remembered plan serves the next query from the same places, with the
// new sample's figures, and gives way to a fresh plan where the queries
// moved away from every reference.
func TestPlansKeepAndReplan(t *testing.T) {
	refs := PrepareRefs(capPoints(1<<14, 0.5, 0.5, 1)) // references crowd one place
	var plans Plans
	near := capPoints(4096, 0.5, 0.5, 2)
	first := plans.Plan(near, refs, GPUGridCost, 0, nil)
	if first.Index == nil && first.Tree == nil {
		t.Fatalf("no index planned: %s", first.Reason)
	}
	again := plans.Plan(capPoints(4096, 0.5, 0.5, 3), refs, GPUGridCost, 0, nil)
	if again.Index != first.Index || again.Tree != first.Tree {
		t.Errorf("the plan was not kept for observations from the same place")
	}
	far := capPoints(4096, -0.5, math.Pi-0.5, 4) // the other side of the Earth
	fresh := plans.Plan(far, refs, GPUGridCost, 0, nil)
	want := PlanGrid(far, refs, GPUGridCost, 0, nil)
	if (fresh.Index == nil) != (want.Index == nil) || (fresh.Tree == nil) != (want.Tree == nil) {
		t.Errorf("far observations: kept %q, a fresh plan is %q", fresh.Note(), want.Note())
	}
	if fresh.Index != nil && fresh.Index == first.Index {
		t.Errorf("far observations kept the near plan: %s", fresh.Note())
	}
}

// A nil *Plans plans every query, and a remembered plan is per reference
// set and cost model.
func TestPlansKeys(t *testing.T) {
	var none *Plans
	refs := PrepareRefs(spherePoints(1<<12, 1))
	obs := spherePoints(2048, 2)
	if a, b := none.Plan(obs, refs, GPUGridCost, 0, nil), none.Plan(obs, refs, GPUGridCost, 0, nil); a.Index == b.Index {
		t.Errorf("a nil Plans remembered a plan")
	}
	var plans Plans
	a := plans.Plan(obs, refs, GPUGridCost, 0, nil)
	if b := plans.Plan(obs, refs, CPUGridCost, 0, nil); b.Index == a.Index {
		t.Errorf("the CPU's plan is the GPU's")
	}
	other := PrepareRefs(spherePoints(1<<12, 3))
	if b := plans.Plan(obs, other, GPUGridCost, 0, nil); b.Index == a.Index {
		t.Errorf("another reference set's plan was kept")
	}
}
