package index

import (
	"math"

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
type GridIndex struct {
	G      int        // cells per axis
	h      float64    // cell side
	h32    float32    // the global grid's cell side in float32, 2/g
	origin [3]float64 // the grid's lower corner
	top    [3]float64 // and its upper corner
	invH   float64    // 1/h, for the fitted grid's cell assignment
	Fitted bool       // cells assigned in float64 from origin
	slack  float64    // margin over cell bounds covering the assignment's rounding
	Start  []uint32   // start[c] .. start[c+1]: refs of cell c in sorted order
	// Sorted references in float64 and the distinct-reference index of each
	// (the GPU builds its own index on the device).
	X, Y, Z []float64
	ID      []uint32
	// Runs[4*(i*g+j) ...]: the z-cell runs [lo0, hi0, lo1, hi1] of column
	// (i, j) that can hold references (lo > hi: empty run): where the unit
	// sphere crosses the column (global), or around its occupied cells
	// (fitted), so a query visits only those instead of whole 3D shells.
	Runs []int16
}

// fittedSlack covers the float64 rounding of a fitted grid's cell
// assignment and bounds (a few units in the last place of numbers near 1).
const fittedSlack = 1e-14

// BuildGrid is the global grid of side g over refs.
func BuildGrid(refs *RefSet, g int) *GridIndex {
	ix := &GridIndex{G: g, h: 2 / float64(g), h32: 2 / float32(g), origin: [3]float64{-1, -1, -1}, top: [3]float64{1, 1, 1},
		slack: gridSlack}
	ix.fill(refs, func(k int) int {
		return ix.cell32(refs.Xyzw[4*k], refs.Xyzw[4*k+1], refs.Xyzw[4*k+2])
	}, nil)
	ix.Runs = SphereRunsTable(g)
	return ix
}

// BuildFittedGrid is the fitted grid of side g over refs: the cube whose
// side is the bounding box's longest, centred on the box.
func BuildFittedGrid(refs *RefSet, g int) *GridIndex { return BuildFittedGridOn(refs, g, nil) }

// BuildFittedGridOn is buildFittedGrid on team's workers.
func BuildFittedGridOn(refs *RefSet, g int, team *parallel.Team) *GridIndex {
	lo, side := FittedCube(refs)
	ix := &GridIndex{G: g, h: side / float64(g), invH: float64(g) / side, origin: lo, Fitted: true, slack: fittedSlack}
	for a := range 3 {
		ix.top[a] = ix.lower(g, a)
	}
	ix.fill(refs, func(k int) int { return ix.CellOf(refs.X[k], refs.Y[k], refs.Z[k]) }, team)
	ix.Runs = occupiedRuns(ix, team)
	return ix
}

// FittedCube is the lower corner and side of the cube around the
// references' bounding box (a side of at least 1e-9, about 6 mm: identical
// points merge, so only one reference can have none).
func FittedCube(refs *RefSet) (lo [3]float64, side float64) {
	lo, hi := refs.Box[0], refs.Box[1]
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
func (ix *GridIndex) fill(refs *RefSet, cellOf func(k int) int, team *parallel.Team) {
	cells, n := ix.G*ix.G*ix.G, refs.N
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
	ix.Start = make([]uint32, cells+1)
	team.Blocks(cells, fillCellsBlock, func(_, lo, hi int) {
		for c := lo; c < hi; c++ {
			for b := range blocks {
				ix.Start[c+1] += at[b*cells+c]
			}
		}
	})
	for c := 1; c <= cells; c++ {
		ix.Start[c] += ix.Start[c-1]
	}
	team.Blocks(cells, fillCellsBlock, func(_, lo, hi int) {
		for c := lo; c < hi; c++ {
			next := ix.Start[c]
			for b := range blocks {
				next, at[b*cells+c] = next+at[b*cells+c], next
			}
		}
	})
	ix.X, ix.Y, ix.Z = make([]float64, n), make([]float64, n), make([]float64, n)
	ix.ID = make([]uint32, n)
	team.Blocks(n, per, func(_, lo, hi int) {
		next := at[lo/per*cells:][:cells]
		for k := lo; k < hi; k++ { // ascending k: each cell lists references in index order
			p := next[cellIDs[k]]
			next[cellIDs[k]]++
			ix.X[p], ix.Y[p], ix.Z[p] = refs.X[k], refs.Y[k], refs.Z[k]
			ix.ID[p] = uint32(k)
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
func (ix *GridIndex) cell32(x, y, z float32) int {
	return (cellOf(x, ix.G, ix.h32)*ix.G+cellOf(y, ix.G, ix.h32))*ix.G + cellOf(z, ix.G, ix.h32)
}

// axisCell is the cell index along axis a of coordinate v.
func (ix *GridIndex) axisCell(v float64, a int) int {
	if !ix.Fitted {
		return cellOf(float32(v), ix.G, ix.h32)
	}
	c := math.Floor((v - ix.origin[a]) * ix.invH) // within fittedSlack of the division's cell
	return int(max(0, min(c, float64(ix.G-1))))
}

// cells is the cell of unit vector (x, y, z) along each axis.
func (ix *GridIndex) cells(x, y, z float64) [3]int {
	return [3]int{ix.axisCell(x, 0), ix.axisCell(y, 1), ix.axisCell(z, 2)}
}

// CellOf is the cell of unit vector (x, y, z).
func (ix *GridIndex) CellOf(x, y, z float64) int {
	c := ix.cells(x, y, z)
	return (c[0]*ix.G+c[1])*ix.G + c[2]
}

// lower is the lower bound along axis a of cell index c.
func (ix *GridIndex) lower(c, a int) float64 { return ix.origin[a] + float64(c)*ix.h }

// ChordBound is the squared distance a cell's box must be within to hold a
// reference at squared chord d2: the chord plus the grid's slack.
func (ix *GridIndex) ChordBound(d2 float64) float64 { return slackBound(d2, ix.slack) }

// slackBound is the squared distance sqrt(d2) + slack (+Inf for +Inf).
func slackBound(d2, slack float64) float64 {
	t := math.Sqrt(d2) + slack
	return t * t
}

// GridWork counts what a query did, for the cost model.
type GridWork struct {
	cells, candidates int
}

// Nearest finds the reference nearest to unit vector (px, py, pz) in
// float64, ties to the lowest distinct-reference index; it returns the
// squared chord and the index. It scans shells of cells at growing
// Chebyshev distance r around the point's own cell and stops once every
// cell outside the shells scanned is provably farther than the best found.
func (ix *GridIndex) Nearest(px, py, pz float64, w *GridWork) (float64, uint32) {
	q := ix.search([3]float64{px, py, pz}, w)
	q.run(ix.G)
	return q.Best, q.BestID
}

// NearestWithin is nearest's squared chord, or false where proving it
// would take more than shells shells of cells (p far from every
// reference).
func (ix *GridIndex) NearestWithin(p [3]float64, shells int) (float64, bool) {
	q := ix.search(p, nil)
	return q.Best, q.run(shells)
}

// search is a nearest search from p, nothing found yet.
func (ix *GridIndex) search(p [3]float64, w *GridWork) GridSearch {
	return GridSearch{Ix: ix, P: p, C: ix.cells(p[0], p[1], p[2]), Best: math.Inf(1), BestID: math.MaxUint32,
		Thr2: math.Inf(1), w: w}
}

// run scans shells of cells until the best is proven or shells of them are
// scanned, and reports whether it is proven.
func (q *GridSearch) run(shells int) bool {
	for r := 0; r < q.Ix.G; r++ {
		if r == shells {
			return false
		}
		q.Shell(r)
		if q.Done(r) {
			return true
		}
	}
	return true
}

// GridSearch is one query's state in the CPU grid: the point p in cell c,
// the best reference so far, and thr2, the squared distance beyond which a
// cell cannot hold a better one.
type GridSearch struct {
	Ix         *GridIndex
	P          [3]float64
	C          [3]int
	Best, Thr2 float64
	BestID     uint32
	w          *GridWork
}

// Shell scans the columns (i, j) of the shell of cells at Chebyshev
// distance r, skipping those whose (x, y) box is already too far.
func (q *GridSearch) Shell(r int) {
	g := q.Ix.G
	for i := max(q.C[0]-r, 0); i <= min(q.C[0]+r, g-1); i++ {
		bx := q.boxDist(i, 0)
		for j := max(q.C[1]-r, 0); j <= min(q.C[1]+r, g-1); j++ {
			by := q.boxDist(j, 1)
			q.count(0, 1) // the column test costs about what a cell does
			if bx*bx+by*by <= q.Thr2 {
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
func (q *GridSearch) column(i, j, r int, bxy2 float64) {
	ix, cz := q.Ix, q.C[2]
	runs := ix.Runs[4*(i*ix.G+j) : 4*(i*ix.G+j)+4]
	edge := abs(i-q.C[0]) == r || abs(j-q.C[1]) == r
	px, py, pz, best, bestID, thr2 := q.P[0], q.P[1], q.P[2], q.Best, q.BestID, q.Thr2
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
			c := (i*ix.G+j)*ix.G + k
			for p := ix.Start[c]; p < ix.Start[c+1]; p++ {
				d := Chord2(px, py, pz, ix.X[p], ix.Y[p], ix.Z[p])
				if d < best || (d == best && ix.ID[p] < bestID) {
					best, bestID = d, ix.ID[p]
					thr2 = ix.ChordBound(d)
				}
			}
			q.count(int(ix.Start[c+1]-ix.Start[c]), 0)
		}
	}
	q.Best, q.BestID, q.Thr2 = best, bestID, thr2
}

// count adds to the work tally, when the query keeps one.
func (q *GridSearch) count(candidates, cells int) {
	if q.w != nil {
		q.w.candidates += candidates
		q.w.cells += cells
	}
}

// boxDist is the distance along axis a from the point to cell index c's
// slab (0 inside it).
func (q *GridSearch) boxDist(c, a int) float64 {
	lo := q.Ix.lower(c, a)
	if d := lo - q.P[a]; d > 0 {
		return d
	}
	if d := q.P[a] - (lo + q.Ix.h); d > 0 {
		return d
	}
	return 0
}

// Done reports whether everything not yet scanned, which lies outside the
// cube of cells within Chebyshev distance r, is farther than the best. What
// remains of the grid is at most six slabs beyond the cube's faces; a
// slab's distance is its face's along the axis and, for a point outside the
// grid (a fitted grid's observation far from the references), the point's
// distance to the grid's extent along the other two.
func (q *GridSearch) Done(r int) bool {
	ix, p := q.Ix, q.P
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
	for a := range q.C {
		rest := out2 - off[a]*off[a]
		if q.C[a]-r > 0 {
			lb = min(lb, slabDist(p[a]-ix.lower(q.C[a]-r, a), rest))
		}
		if q.C[a]+r < ix.G-1 {
			lb = min(lb, slabDist(ix.lower(q.C[a]+r+1, a)-p[a], rest))
		}
	}
	return math.IsInf(lb, 1) || lb-ix.slack > math.Sqrt(q.Best)
}

// slabDist is the distance to a slab d away along its axis and sqrt(rest)
// across it.
func slabDist(d, rest float64) float64 {
	if rest > 0 {
		return math.Sqrt(d*d + rest)
	}
	return d
}

// NearCube tells whether p lies within cells cells of ix's cube: farther
// out, its nearest reference is more shells away than a tile's search
// walks.
func (ix *GridIndex) NearCube(p [3]float64, cells int) bool {
	margin := float64(cells) * ix.h
	for a := range 3 {
		if p[a] < ix.origin[a]-margin || p[a] > ix.top[a]+margin {
			return false
		}
	}
	return true
}
