package index

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
)

// MaxGridCells bounds the index memory (4 bytes a cell).
const MaxGridCells = 1 << 25

// GridSide is the number of cells per axis for n references at a given
// density: the sphere crosses about 4.7 G^2 cells, so G = sqrt(n /
// (4.7 * perCell)).
func GridSide(n int, perCell float64) int {
	g := int(math.Ceil(math.Sqrt(float64(n) / (4.7 * perCell))))
	return max(1, min(g, MaxGridSide))
}

// MaxGridSide is the largest grid side: MaxGridSide^3 <= maxGridCells.
const MaxGridSide = 322

// CappedSide is a grid side the caller chose, capped where the sphere would
// cross more than 16 cells a reference: a finer grid only adds empty cells
// to walk (16 references on a 322^3 grid took 9 s for 1,024 observations).
func CappedSide(side, nref int) int { return min(side, max(4, GridSide(nref, 1.0/16))) }

// GridPlan is the outcome of planning a grid query: the index to use, or nil
// when the sampled cost says brute force is cheaper (references packed into
// few cells, or observations far from every reference).
type GridPlan struct {
	Index *GridIndex
	// Tree, when the cost model allows trees and a k-d tree costs less
	// than every grid and brute force (index is then nil).
	Tree *KDTree
	// Sampled work a query: cells (tree nodes) visited and candidates ranked.
	cellsPerQuery, candidatesPerQuery float64
	costPerQuery                      float64 // in brute-force pairs (GridCost)
	Reason                            string
}

// Note describes the plan for Stats.Note.
func (p GridPlan) Note() string {
	if p.Tree != nil {
		return fmt.Sprintf("k-d tree, %.1f nodes and %.1f candidates a query (sampled; %s)",
			p.cellsPerQuery, p.candidatesPerQuery, p.Reason)
	}
	return fmt.Sprintf("grid %d^3 cells, %.1f cells and %.1f candidates a query (sampled)",
		p.Index.G, p.cellsPerQuery, p.candidatesPerQuery)
}

// PlanGrid builds indexes at several densities, runs a sample of the actual
// observations through each on the CPU and keeps the cheaper, or none when
// brute force would cost less. Costs are in units of one brute-force pair
// (which the tiled kernels and the CPU loop run at full rate); a brute-force
// query costs one pair a reference plus m.bruteQuery. tree is refs' k-d tree
// when one is prepared (nil: built if the plan samples one).
func PlanGrid(obs Points, refs *RefSet, m GridCost, side int, tree *KDTree) GridPlan {
	brute := float64(refs.N) + m.bruteQuery
	idx := planSample(obs.Len(), refs.N)
	sides := candidateSides(refs, side)
	// The sides are sampled concurrently (each builds its own index); a
	// side stops sampling once it is costlier than brute force.
	plans := make([]GridPlan, len(sides))
	costs := make([]float64, len(sides))
	var wg sync.WaitGroup
	for k, g := range sides {
		wg.Add(1)
		go func() {
			defer wg.Done()
			plans[k], costs[k] = sampleSide(obs, idx, refs, g, m, brute)
		}()
	}
	wg.Wait()
	k := cheapest(costs)
	plan := plans[k]
	plan.costPerQuery = costs[k]
	// A k-d tree only where no grid costs under a tenth of brute force
	// (references in a few clusters or one, observations far from them):
	// elsewhere the grid wins and the tree's build would only add to the plan.
	if m.trees && side == 0 && costs[k] > brute/10 {
		if tree, cost := sampleTree(obs, idx, refs, m, brute, tree); cost < min(costs[k], brute) {
			tree.costPerQuery = cost
			tree.Reason = fmt.Sprintf("the cheapest grid, %d^3, would visit %.0f cells and rank %.0f references a query",
				plan.Index.G, plan.cellsPerQuery, plan.candidatesPerQuery)
			return tree
		}
	}
	if costs[k] > brute && side == 0 {
		plan.Reason = fmt.Sprintf("grid would visit %.0f cells and rank %.0f references a query, costlier than brute force over %d",
			plan.cellsPerQuery, plan.candidatesPerQuery, refs.N)
		plan.Index = nil
	}
	return plan
}

// sampleTree is sampleSide for a k-d tree (t, or built when nil), a node
// costing what a cell does.
func sampleTree(obs Points, idx []int, refs *RefSet, m GridCost, brute float64, t *KDTree) (GridPlan, float64) {
	if t == nil {
		t = BuildKDTree(refs)
	}
	nodes, cands, cost := sampleCost(obs, idx, m, brute, t.Nearest)
	return GridPlan{Tree: t, cellsPerQuery: nodes, candidatesPerQuery: cands}, cost
}

// planSample picks the (at most 512) observations of n a plan is sampled
// on, reproducibly for the sizes.
func planSample(n, nref int) []int {
	const sample = 512
	idx := make([]int, min(sample, n))
	rng := rand.New(rand.NewPCG(uint64(n), uint64(nref)))
	for i := range idx {
		if n <= sample {
			idx[i] = i
		} else {
			idx[i] = rng.IntN(n)
		}
	}
	return idx
}

// candidateSides lists the grid sides to sample for refs: the density that
// suits the references' dense places, g0, is too fine where they are sparse
// (observations far from every reference scan many empty cells), so coarser
// grids down to g0/8 in steps of sqrt 2 are sampled too. A side the caller
// chose (side > 0) is the only one, capped (cappedSide).
func candidateSides(refs *RefSet, side int) []int {
	if side > 0 {
		return []int{CappedSide(side, refs.N)}
	}
	g0 := GridSide(refs.N, 2)
	var sides []int
	for k, f := 0, 1.0; k < 7; k, f = k+1, f/math.Sqrt2 {
		if g := int(math.Round(float64(g0) * f)); g >= 4 && (len(sides) == 0 || g != sides[len(sides)-1]) {
			sides = append(sides, g)
		}
	}
	if len(sides) == 0 {
		sides = []int{g0}
	}
	return sides
}

// sampleSide builds the index of side g and runs the sample through it;
// it returns the plan and its cost a query.
func sampleSide(obs Points, idx []int, refs *RefSet, g int, m GridCost, brute float64) (GridPlan, float64) {
	ix := m.build(refs, g)
	cells, cands, cost := sampleCost(obs, idx, m, brute, ix.Nearest)
	return GridPlan{Index: ix, cellsPerQuery: cells, candidatesPerQuery: cands}, cost
}

// sampleCost runs the sampled observations through nearest, stopping early
// once they cost more than brute force; it returns the cells (or nodes) and
// candidates a query and the cost a query.
func sampleCost(obs Points, idx []int, m GridCost, brute float64,
	nearest func(x, y, z float64, w *GridWork) (float64, uint32)) (cells, cands, cost float64) {
	var w GridWork
	ran := 0
	for _, i := range idx {
		x, y, z := Unit(obs.At(i))
		nearest(x, y, z, &w)
		ran++
		if m.unit*(1.5*float64(w.cells)+float64(w.candidates)) > brute*float64(len(idx)) {
			break // already costlier than brute force: stop sampling
		}
	}
	ran = max(ran, 1) // an empty sample costs nothing
	cells, cands = float64(w.cells)/float64(ran), float64(w.candidates)/float64(ran)
	return cells, cands, m.unit * (1.5*cells + cands)
}

// cheapest is the index of the lowest cost, ties to the first (the finest
// side).
func cheapest(costs []float64) int {
	best := 0
	for k, c := range costs {
		if c < costs[best] {
			best = k
		}
	}
	return best
}

// gridCost is the cost model of a grid query, in brute-force pairs: a
// visited cell (or column) costs 1.5 units and a ranked candidate one, and
// a unit costs `unit` pairs; bruteQuery is brute force's own cost an
// observation beyond its pairs (on the CPU the unit vector, tiles and the
// final re-rank; on the GPU nothing that matters). The fits and their runs
// are in internal/kernels/NOTES.md ("Grid cost model").
type GridCost struct {
	unit, bruteQuery float64
	fitted           bool // the CPU engine's own grid (buildFittedGrid); the GPU's kernels use the global one
	trees            bool // a k-d tree may be planned (a tree node costs what a cell does)
}

var (
	CPUGridCost = GridCost{unit: 80, bruteQuery: 3000, fitted: true, trees: true}
	GPUGridCost = GridCost{unit: 130, trees: true}
	// Sessions rebuild their index on the device at every step: no trees.
	GPUSessionGridCost = GridCost{unit: 130}
)

// build is the grid of side g over refs that the model plans.
func (m GridCost) build(refs *RefSet, g int) *GridIndex {
	if m.fitted {
		return BuildFittedGrid(refs, g)
	}
	return BuildGrid(refs, g)
}
