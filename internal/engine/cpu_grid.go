package engine

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/geoknn/geoknn/internal/parallel"
)

// The grid index: the unit vectors of the references bucketed into a G x G x
// G grid of cubes. Distances between unit vectors are chord lengths,
// monotone in great-circle distance, so the exact nearest reference on the
// sphere is the exact nearest point in 3D, and the search has no special
// cases: no poles, no antimeridian, no cube-map seams. A query scans shells
// of cells around its own cell, nearest first, skipping every cell whose box
// is farther than the best found, and stops once the distance to everything
// outside the scanned cube exceeds the best: exact by construction.
//
// Two kinds of grid share the search. The global grid covers [-1, 1]^3 with
// cells assigned from the float32 unit vectors, as the GPU's kernels assign
// them (its costs plan the GPU's queries); float64 positions differ from
// them by under 1e-7, which gridSlack covers. The fitted grid, the CPU
// engine's own, covers the cube around the references' bounding box with
// cells assigned in float64, so references crowded into a city or a few
// metres get cells of their own scale (on the global grid they share one
// cell and the query is brute force).
type gridIndex struct {
	g      int        // cells per axis
	h      float64    // cell side
	h32    float32    // the global grid's cell side in float32, 2/g
	origin [3]float64 // the grid's lower corner
	top    [3]float64 // and its upper corner
	invH   float64    // 1/h, for the fitted grid's cell assignment
	fitted bool       // cells assigned in float64 from origin
	slack  float64    // margin over cell bounds covering the assignment's rounding
	start  []uint32   // start[c] .. start[c+1]: refs of cell c in sorted order
	// Sorted references in float64 and the distinct-reference index of each
	// (the GPU builds its own index on the device).
	x, y, z []float64
	id      []uint32
	// runs[4*(i*g+j) ...]: the z-cell runs [lo0, hi0, lo1, hi1] of column
	// (i, j) that can hold references (lo > hi: empty run): where the unit
	// sphere crosses the column (global), or around its occupied cells
	// (fitted), so a query visits only those instead of whole 3D shells.
	runs []int16
}

// fittedSlack covers the float64 rounding of a fitted grid's cell
// assignment and bounds (a few units in the last place of numbers near 1).
const fittedSlack = 1e-14

// buildGrid is the global grid of side g over refs.
func buildGrid(refs *refSet, g int) *gridIndex {
	ix := &gridIndex{g: g, h: 2 / float64(g), h32: 2 / float32(g), origin: [3]float64{-1, -1, -1}, top: [3]float64{1, 1, 1},
		slack: gridSlack}
	ix.fill(refs, func(k int) int {
		return ix.cell32(refs.xyzw[4*k], refs.xyzw[4*k+1], refs.xyzw[4*k+2])
	}, nil)
	ix.runs = sphereRunsTable(g)
	return ix
}

// buildFittedGrid is the fitted grid of side g over refs: the cube whose
// side is the bounding box's longest, centred on the box.
func buildFittedGrid(refs *refSet, g int) *gridIndex { return buildFittedGridOn(refs, g, nil) }

// buildFittedGridOn is buildFittedGrid on team's workers.
func buildFittedGridOn(refs *refSet, g int, team *parallel.Team) *gridIndex {
	lo, side := fittedCube(refs)
	ix := &gridIndex{g: g, h: side / float64(g), invH: float64(g) / side, origin: lo, fitted: true, slack: fittedSlack}
	for a := range 3 {
		ix.top[a] = ix.lower(g, a)
	}
	ix.fill(refs, func(k int) int { return ix.cellOf(refs.x[k], refs.y[k], refs.z[k]) }, team)
	ix.runs = occupiedRuns(ix, team)
	return ix
}

// fittedCube is the lower corner and side of the cube around the
// references' bounding box (a side of at least 1e-9, about 6 mm: identical
// points merge, so only one reference can have none).
func fittedCube(refs *refSet) (lo [3]float64, side float64) {
	lo, hi := refs.box[0], refs.box[1]
	for a := range 3 {
		side = max(side, hi[a]-lo[a])
	}
	side = max(side*(1+1e-9), 1e-9) // room for the largest coordinate's cell
	for a := range 3 {
		lo[a] = (lo[a]+hi[a])/2 - side/2
	}
	return lo, side
}

// fill lists the references cell by cell (cellOf(k) is reference k's
// cell), each cell's in index order, on team's workers: a counting sort
// whose blocks of references count their cells, then place each
// reference after those of the same cell in the blocks before.
func (ix *gridIndex) fill(refs *refSet, cellOf func(k int) int, team *parallel.Team) {
	cells, n := ix.g*ix.g*ix.g, refs.n
	blocks := max(1, min(team.Workers(), n/fillBlockMin, 8*n/cells))
	per := (n + blocks - 1) / blocks
	cellIDs := make([]uint32, n)
	at := make([]uint32, blocks*cells) // block b's count, then first place, in cell c at b*cells+c
	team.Blocks(n, per, func(_, lo, hi int) {
		count := at[lo/per*cells:][:cells]
		for k := lo; k < hi; k++ {
			c := uint32(cellOf(k))
			cellIDs[k] = c
			count[c]++
		}
	})
	ix.start = make([]uint32, cells+1)
	team.Blocks(cells, fillCellsBlock, func(_, lo, hi int) {
		for c := lo; c < hi; c++ {
			for b := range blocks {
				ix.start[c+1] += at[b*cells+c]
			}
		}
	})
	for c := 1; c <= cells; c++ {
		ix.start[c] += ix.start[c-1]
	}
	team.Blocks(cells, fillCellsBlock, func(_, lo, hi int) {
		for c := lo; c < hi; c++ {
			next := ix.start[c]
			for b := range blocks {
				next, at[b*cells+c] = next+at[b*cells+c], next
			}
		}
	})
	ix.x, ix.y, ix.z = make([]float64, n), make([]float64, n), make([]float64, n)
	ix.id = make([]uint32, n)
	team.Blocks(n, per, func(_, lo, hi int) {
		next := at[lo/per*cells:][:cells]
		for k := lo; k < hi; k++ { // ascending k: each cell lists references in index order
			p := next[cellIDs[k]]
			next[cellIDs[k]]++
			ix.x[p], ix.y[p], ix.z[p] = refs.x[k], refs.y[k], refs.z[k]
			ix.id[p] = uint32(k)
		}
	})
}

const (
	// fillBlockMin is the fewest references a block of fill takes.
	fillBlockMin = 1 << 12
	// fillCellsBlock is the cells a step of fill's offsets takes at a time.
	fillCellsBlock = 1 << 10
)

// cell32 is the global grid's cell of a float32 unit vector.
func (ix *gridIndex) cell32(x, y, z float32) int {
	return (cellOf(x, ix.g, ix.h32)*ix.g+cellOf(y, ix.g, ix.h32))*ix.g + cellOf(z, ix.g, ix.h32)
}

// axisCell is the cell index along axis a of coordinate v.
func (ix *gridIndex) axisCell(v float64, a int) int {
	if !ix.fitted {
		return cellOf(float32(v), ix.g, ix.h32)
	}
	c := math.Floor((v - ix.origin[a]) * ix.invH) // within fittedSlack of the division's cell
	return int(max(0, min(c, float64(ix.g-1))))
}

// cells is the cell of unit vector (x, y, z) along each axis.
func (ix *gridIndex) cells(x, y, z float64) [3]int {
	return [3]int{ix.axisCell(x, 0), ix.axisCell(y, 1), ix.axisCell(z, 2)}
}

// cellOf is the cell of unit vector (x, y, z).
func (ix *gridIndex) cellOf(x, y, z float64) int {
	c := ix.cells(x, y, z)
	return (c[0]*ix.g+c[1])*ix.g + c[2]
}

// lower is the lower bound along axis a of cell index c.
func (ix *gridIndex) lower(c, a int) float64 { return ix.origin[a] + float64(c)*ix.h }

// chordBound is the squared distance a cell's box must be within to hold a
// reference at squared chord d2: the chord plus the grid's slack.
func (ix *gridIndex) chordBound(d2 float64) float64 { return slackBound(d2, ix.slack) }

// slackBound is the squared distance sqrt(d2) + slack (+Inf for +Inf).
func slackBound(d2, slack float64) float64 {
	t := math.Sqrt(d2) + slack
	return t * t
}

// gridWork counts what a query did, for the cost model.
type gridWork struct {
	cells, candidates int
}

// nearest finds the reference nearest to unit vector (px, py, pz) in
// float64, ties to the lowest distinct-reference index; it returns the
// squared chord and the index. It scans shells of cells at growing
// Chebyshev distance r around the point's own cell and stops once every
// cell outside the shells scanned is provably farther than the best found.
func (ix *gridIndex) nearest(px, py, pz float64, w *gridWork) (float64, uint32) {
	q := ix.search([3]float64{px, py, pz}, w)
	q.run(ix.g)
	return q.best, q.bestID
}

// nearestWithin is nearest's squared chord, or false where proving it
// would take more than shells shells of cells (p far from every
// reference).
func (ix *gridIndex) nearestWithin(p [3]float64, shells int) (float64, bool) {
	q := ix.search(p, nil)
	return q.best, q.run(shells)
}

// search is a nearest search from p, nothing found yet.
func (ix *gridIndex) search(p [3]float64, w *gridWork) gridSearch {
	return gridSearch{ix: ix, p: p, c: ix.cells(p[0], p[1], p[2]), best: math.Inf(1), bestID: math.MaxUint32,
		thr2: math.Inf(1), w: w}
}

// run scans shells of cells until the best is proven or shells of them are
// scanned, and reports whether it is proven.
func (q *gridSearch) run(shells int) bool {
	for r := 0; r < q.ix.g; r++ {
		if r == shells {
			return false
		}
		q.shell(r)
		if q.done(r) {
			return true
		}
	}
	return true
}

// gridSearch is one query's state in the CPU grid: the point p in cell c,
// the best reference so far, and thr2, the squared distance beyond which a
// cell cannot hold a better one.
type gridSearch struct {
	ix         *gridIndex
	p          [3]float64
	c          [3]int
	best, thr2 float64
	bestID     uint32
	w          *gridWork
}

// shell scans the columns (i, j) of the shell of cells at Chebyshev
// distance r, skipping those whose (x, y) box is already too far.
func (q *gridSearch) shell(r int) {
	g := q.ix.g
	for i := max(q.c[0]-r, 0); i <= min(q.c[0]+r, g-1); i++ {
		bx := q.boxDist(i, 0)
		for j := max(q.c[1]-r, 0); j <= min(q.c[1]+r, g-1); j++ {
			by := q.boxDist(j, 1)
			q.count(0, 1) // the column test costs about what a cell does
			if bx*bx+by*by <= q.thr2 {
				q.column(i, j, r, bx*bx+by*by)
			}
		}
	}
}

// column scans the cells of column (i, j) in the shell of distance r: only
// those the unit sphere crosses (two runs of z cells) can hold references,
// and of an interior column only the shell's two z faces are new. The
// candidate loop is written out here, with the query's state in locals, as
// this is the CPU grid's hot path.
func (q *gridSearch) column(i, j, r int, bxy2 float64) {
	ix, cz := q.ix, q.c[2]
	runs := ix.runs[4*(i*ix.g+j) : 4*(i*ix.g+j)+4]
	edge := abs(i-q.c[0]) == r || abs(j-q.c[1]) == r
	px, py, pz, best, bestID, thr2 := q.p[0], q.p[1], q.p[2], q.best, q.bestID, q.thr2
	for h := 0; h < 2; h++ {
		lo, hi := max(int(runs[2*h]), cz-r), min(int(runs[2*h+1]), cz+r)
		for k := lo; k <= hi; k++ {
			if !edge && k != cz-r && k != cz+r {
				k = cz + r - 1 // interior column: jump to the far z face
				continue
			}
			q.count(0, 1)
			if bz := q.boxDist(k, 2); bxy2+bz*bz > thr2 {
				continue
			}
			c := (i*ix.g+j)*ix.g + k
			for p := ix.start[c]; p < ix.start[c+1]; p++ {
				d := chord2(px, py, pz, ix.x[p], ix.y[p], ix.z[p])
				if d < best || (d == best && ix.id[p] < bestID) {
					best, bestID = d, ix.id[p]
					thr2 = ix.chordBound(d)
				}
			}
			q.count(int(ix.start[c+1]-ix.start[c]), 0)
		}
	}
	q.best, q.bestID, q.thr2 = best, bestID, thr2
}

// count adds to the work tally, when the query keeps one.
func (q *gridSearch) count(candidates, cells int) {
	if q.w != nil {
		q.w.candidates += candidates
		q.w.cells += cells
	}
}

// boxDist is the distance along axis a from the point to cell index c's
// slab (0 inside it).
func (q *gridSearch) boxDist(c, a int) float64 {
	lo := q.ix.lower(c, a)
	if d := lo - q.p[a]; d > 0 {
		return d
	}
	if d := q.p[a] - (lo + q.ix.h); d > 0 {
		return d
	}
	return 0
}

// done reports whether everything not yet scanned, which lies outside the
// cube of cells within Chebyshev distance r, is farther than the best. What
// remains of the grid is at most six slabs beyond the cube's faces; a
// slab's distance is its face's along the axis and, for a point outside the
// grid (a fitted grid's observation far from the references), the point's
// distance to the grid's extent along the other two.
func (q *gridSearch) done(r int) bool {
	ix, p := q.ix, q.p
	var off [3]float64 // distance from p to the grid's extent along each axis, 0 within
	out2 := 0.0
	if p[0] < ix.origin[0] || p[0] > ix.top[0] || p[1] < ix.origin[1] || p[1] > ix.top[1] ||
		p[2] < ix.origin[2] || p[2] > ix.top[2] {
		for a := range off {
			off[a] = max(ix.origin[a]-p[a], p[a]-ix.top[a], 0)
			out2 += off[a] * off[a]
		}
	}
	lb := math.Inf(1)
	for a := range q.c {
		rest := out2 - off[a]*off[a]
		if q.c[a]-r > 0 {
			lb = min(lb, slabDist(p[a]-ix.lower(q.c[a]-r, a), rest))
		}
		if q.c[a]+r < ix.g-1 {
			lb = min(lb, slabDist(ix.lower(q.c[a]+r+1, a)-p[a], rest))
		}
	}
	return math.IsInf(lb, 1) || lb-ix.slack > math.Sqrt(q.best)
}

// slabDist is the distance to a slab d away along its axis and sqrt(rest)
// across it.
func slabDist(d, rest float64) float64 {
	if rest > 0 {
		return math.Sqrt(d*d + rest)
	}
	return d
}

// nearestGrid answers a grid query on the CPU: goroutines over batches of
// observations, float64 throughout, the same answer as brute force.
func (c *CPU) nearestGrid(ctx context.Context, req Request, out Result, refs *refSet, start time.Time) (Stats, error) {
	refused, tree := "", req.mergedTree()
	if req.GridSide == 0 && useFaces(req.Obs.Len(), refs.n) {
		end := req.Trace.Begin("host", "face cells")
		side := cellsSideFor(req.Obs.Len(), refs.n, false) // the GPU's balance of build and query
		trees := newLazyTree(refs, tree, req.Trace, req.trees)
		defer trees.release() // after every path below that reads the tree
		fc, why, err := buildFaceCells(ctx, refs, trees, side, req.team, req.faces)
		tree = trees.built()
		end()
		if err != nil {
			return Stats{}, fmt.Errorf("cpu engine: %w", err)
		}
		if fc != nil {
			st, err := c.nearestFaces(ctx, req, out, refs, fc, start)
			st.Note = fc.note()
			req.faces.release(fc)
			return st, err
		}
		refused = "no face cells: " + why + "; "
	}
	st, err := c.nearestPlanned(ctx, req, out, refs, tree, start)
	st.Note = refused + st.Note
	return st, err
}

// nearestPlanned answers a grid query through the index the plan picks:
// the grid, the k-d tree (tree, when one is built already) or brute force.
func (c *CPU) nearestPlanned(ctx context.Context, req Request, out Result, refs *refSet, tree *kdTree, start time.Time) (Stats, error) {
	// The paths below start goroutines of their own, which a team spinning
	// beside them would keep from the cores: brute force and the
	// observations one by one take a team of their own in run.
	req.team.Close()
	req.team = nil
	end := req.Trace.Begin("host", "plan")
	plan := planGrid(req.Obs, refs, cpuGridCost, req.GridSide, tree)
	end()
	if err := ctx.Err(); err != nil {
		return Stats{}, err
	}
	if plan.tree != nil {
		var st Stats
		var err error
		if req.Obs.Len() >= cellOrderMin {
			st, err = c.nearestTreeOrdered(ctx, req, out, refs, plan.tree, start)
		} else {
			st, err = c.nearestEach(ctx, req, out, refs, plan.tree.nearest, start)
		}
		st.Note = plan.note()
		return st, err
	}
	if plan.index == nil {
		st, err := c.nearestBrute(ctx, req, out, refs, start)
		st.Note = "grid fell back to brute force: " + plan.reason
		return st, err
	}
	ix := plan.index
	if req.Obs.Len() >= cellOrderMin {
		st, err := c.nearestGridCells(ctx, req, out, refs, ix, start)
		st.Note = plan.note()
		return st, err
	}
	st, err := c.nearestEach(ctx, req, out, refs, ix.nearest, start)
	st.Note = plan.note()
	return st, err
}

// nearestEach answers the observations one by one through nearest (a grid
// walk or the tree), in batches on every goroutine.
func (c *CPU) nearestEach(ctx context.Context, req Request, out Result, refs *refSet,
	nearest func(x, y, z float64, w *gridWork) (float64, uint32), start time.Time) (Stats, error) {
	batch := req.BatchSize
	if batch == 0 {
		batch = 4096
	}
	return c.run(ctx, req, batch, start, func() func(lo, hi int) {
		return func(lo, hi int) {
			for i := lo; i < hi; i++ {
				x, y, z := unit(req.Obs.At(i))
				d, k := nearest(x, y, z, nil)
				out.Index[i] = refs.orig[k]
				out.Distance[i] = float32(ChordToAngle(d))
			}
		}
	})
}
