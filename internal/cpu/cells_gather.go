package cpu

import (
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/parallel"
	"github.com/geoknn/geoknn/internal/trace"
)

// The first level's tile pools come from a coarse fitted grid of the
// references (gridIndex) rather than the k-d tree: the grid is bucketed in
// two passes over the references, the tree sorted level by level, and
// where every first-level tile's pool fits (references spread over the
// sphere) nothing else needs the tree, so it is never built. The finer
// levels' small tiles, crowded tiles and cells without a list use the
// tree, built on the build's team when first needed (lazyTree): a
// first-level tile that needs it before then waits for the rest of its
// level, after which the tree is built and the waiting tiles are built.

// faceGridCells is the first level's face cells a grid cell spans along a
// face edge: a tile's pool (a ball about two tiles wide) then spans about
// three grid cells an axis.
const faceGridCells = 3

// faceGridSide is the pools' grid's cells an axis for first-level cells of
// side cells a face edge.
func faceGridSide(side int) int { return max(4, side/faceGridCells) }

// faceGridShells bounds the shells of grid cells a tile's search walks
// before the tile is left to the tree: its ball spans a few cells where
// the references spread, but a centre far from all of them (references in
// one region only) would walk most of the grid.
const faceGridShells = 8

// faceGridMinCube is the least side of the references' bounding cube for
// which the grid gathers: the first level's balls then span a few of its
// cells. References crowded into a smaller region (a country, a city) are
// far from most tiles, which the tree serves better.
const faceGridMinCube = 1.0

// faceGridFor is the grid the first level's pools are gathered through,
// or nil where the references crowd into less than faceGridMinCube.
func faceGridFor(refs *index.RefSet, side int, team *parallel.Team) *index.GridIndex {
	if _, cube := index.FittedCube(refs); cube < faceGridMinCube {
		return nil
	}
	return index.BuildFittedGridOn(refs, faceGridSide(side), team)
}

// lazyTree is the references' k-d tree, built between the face build's
// steps, on its team, when a level first needs it. The steps only read it
// (built), after the step that built it: the team's hand-over of the next
// step orders the write before their reads.
type lazyTree struct {
	refs  *index.RefSet
	trace *trace.Recorder
	mem   *index.KDMemory // where the tree is built; nil: fresh memory
	tree  *index.KDTree
	made  bool // the tree was built here, in mem
}

// newLazyTree holds tree when one is built already (nil: built when first
// needed, in mem's memory).
func newLazyTree(refs *index.RefSet, tree *index.KDTree, tr *trace.Recorder, mem *index.KDMemory) *lazyTree {
	return &lazyTree{refs: refs, trace: tr, mem: mem, tree: tree}
}

// buildOn is the tree, built on team's workers (nil: a team of its own
// when the references are many) unless it is built already. It hands team
// steps: never call it inside one.
func (lt *lazyTree) buildOn(team *parallel.Team) *index.KDTree {
	if lt.tree != nil {
		return lt.tree
	}
	end := lt.trace.Begin("host", "k-d tree")
	if team == nil {
		lt.tree = index.BuildKDTreeIn(lt.refs, lt.mem)
	} else {
		lt.tree = index.BuildKDTreeOn(lt.refs, team, lt.mem)
	}
	lt.made = true
	end()
	return lt.tree
}

// built is the tree if it was built, else nil.
func (lt *lazyTree) built() *index.KDTree { return lt.tree }

// release leaves the tree built here in its memory, for the next query's;
// nothing may read the tree after.
func (lt *lazyTree) release() {
	if lt.made {
		lt.mem.Release(lt.tree)
	}
}

// gatherFromGrid is gatherPool's pool for a tile of centre c and reach
// through b.grid; decided is false where the grid's searches would walk
// far (c far from the references), leaving the tile to the tree.
func (b *faceBuilder) gatherFromGrid(c [3]float64, reach float64) (pooled, decided bool) {
	if !b.grid.NearCube(c, faceGridShells/2) {
		return false, false
	}
	dc2, ok := b.grid.NearestWithin(c, faceGridShells)
	if !ok {
		return false, false
	}
	return b.pool.gatherGrid(b.grid, c, poolChord(dc2, reach), b.poolMost)
}

// gatherGrid is gather through the grid ix: the references within chord r
// of p, in the grid's order; pooled false past most. decided is false
// where the ball takes more than faceGridShells shells of cells: the
// tree's walk is then the cheaper gather.
func (pl *facePool) gatherGrid(ix *index.GridIndex, p [3]float64, r float64, most int) (pooled, decided bool) {
	limit := index.FittedChordBound(r * r)
	pl.reset()
	over := false
	finished := ix.WalkWithin(p, func() float64 { return ix.ChordBound(limit) }, func(c int) bool {
		lo, hi := ix.Start[c], ix.Start[c+1]
		cols := index.KDColumns{X: ix.X[lo:hi], Y: ix.Y[lo:hi], Z: ix.Z[lo:hi], ID: ix.ID[lo:hi]}
		over = !pl.take(p, limit, cols, most)
		return !over
	}, faceGridShells)
	if over || !finished {
		return false, over
	}
	pl.pad()
	return true, true
}
