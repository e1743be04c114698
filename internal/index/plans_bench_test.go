package index_test

import (
	"testing"

	"github.com/geoknn/geoknn/internal/enginetest"
	"github.com/geoknn/geoknn/internal/index"
)

// BenchmarkPlanChunk is the host's plan of a streamed chunk of 2^20 points
// drawn uniform on the sphere against the real cities (the shared set when
// it is beside the checkout, else the sample): planned afresh, as every
// chunk was, and through a Plans that chose on the chunk before.
func BenchmarkPlanChunk(b *testing.B) {
	cities, _ := enginetest.RealSets(b)
	refs := index.PrepareRefs(cities)
	tree := index.BuildKDTree(refs)
	obs := enginetest.SpherePoints(1<<20, 7)
	b.Run("fresh", func(b *testing.B) {
		for b.Loop() {
			index.PlanGrid(obs, refs, index.GPUGridCost, 0, tree)
		}
	})
	b.Run("remembered", func(b *testing.B) {
		var plans index.Plans
		plans.Plan(enginetest.SpherePoints(1<<20, 8), refs, index.GPUGridCost, 0, tree)
		for b.Loop() {
			plans.Plan(obs, refs, index.GPUGridCost, 0, tree)
		}
	})
}
