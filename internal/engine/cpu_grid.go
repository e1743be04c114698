package engine

import (
	"context"
	"math"
	"time"

	"github.com/geoknn/geoknn/internal/parallel"
)

// The grid index: the unit vectors of the references bucketed into a G x G x
// G grid of cubes over [-1, 1]^3. Distances between unit vectors are chord
// lengths, monotone in great-circle distance, so the exact nearest
// reference on the sphere is the exact nearest point in 3D, and the search
// has no special cases: no poles, no antimeridian, no cube-map seams. A query
// scans shells of cells around its own cell, nearest first, skipping every
// cell whose box is farther than the best found, and stops once the
// distance to everything outside the scanned cube exceeds the best: exact by
// construction.
//
// Cells are assigned from the float32 unit vectors (what the GPU ranks with);
// float64 positions differ from them by under 1e-7, which gridSlack covers.
type gridIndex struct {
	g     int     // cells per axis
	h     float64 // cell side, 2/g
	h32   float32
	start []uint32 // start[c] .. start[c+1]: refs of cell c in sorted order
	// Sorted references in float64 and the distinct-reference index of each
	// (the GPU builds its own index on the device).
	x, y, z []float64
	id      []uint32
	// runs[4*(i*g+j) ...]: the z-cell runs [lo0, hi0, lo1, hi1] of column
	// (i, j) that the unit sphere crosses (lo > hi: empty run), so a query
	// visits only cells near the sphere instead of whole 3D shells.
	runs []int16
}

func buildGrid(refs *refSet, g int) *gridIndex {
	ix := &gridIndex{g: g, h: 2 / float64(g), h32: 2 / float32(g)}
	cells := g * g * g
	// The cells in parallel; the counting and the placement stay serial so
	// that each cell lists its references in index order.
	cellIDs := make([]uint32, refs.n)
	parallel.Blocks(refs.n, 1<<13, 0, func(_, lo, hi int) {
		for k := lo; k < hi; k++ {
			cellIDs[k] = uint32(ix.cell(refs.xyzw[4*k], refs.xyzw[4*k+1], refs.xyzw[4*k+2]))
		}
	})
	counts := make([]uint32, cells+1)
	for _, c := range cellIDs {
		counts[c+1]++
	}
	for c := 1; c <= cells; c++ {
		counts[c] += counts[c-1]
	}
	ix.start = counts
	ix.x, ix.y, ix.z = make([]float64, refs.n), make([]float64, refs.n), make([]float64, refs.n)
	ix.id = make([]uint32, refs.n)
	ix.runs = sphereRunsTable(g)
	next := append([]uint32(nil), counts[:cells]...)
	for k := 0; k < refs.n; k++ { // ascending k: each cell lists references in index order
		p := next[cellIDs[k]]
		next[cellIDs[k]]++
		ix.x[p], ix.y[p], ix.z[p] = refs.x[k], refs.y[k], refs.z[k]
		ix.id[p] = uint32(k)
	}
	return ix
}

func (ix *gridIndex) cell(x, y, z float32) int {
	return (cellOf(x, ix.g, ix.h32)*ix.g+cellOf(y, ix.g, ix.h32))*ix.g + cellOf(z, ix.g, ix.h32)
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
	q := gridSearch{ix: ix, p: [3]float64{px, py, pz}, best: math.Inf(1), bestID: math.MaxUint32,
		thr2: math.Inf(1), w: w}
	for a := range q.c {
		q.c[a] = cellOf(float32(q.p[a]), ix.g, ix.h32)
	}
	for r := 0; r < ix.g; r++ {
		q.shell(r)
		if q.done(r) {
			break
		}
	}
	return q.best, q.bestID
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
					t := math.Sqrt(d) + gridSlack
					thr2 = t * t
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
	lo := float64(c)*q.ix.h - 1
	if d := lo - q.p[a]; d > 0 {
		return d
	}
	if d := q.p[a] - (lo + q.ix.h); d > 0 {
		return d
	}
	return 0
}

// done reports whether everything not yet scanned, which lies outside the
// cube of cells within Chebyshev distance r, is farther than the best.
func (q *gridSearch) done(r int) bool {
	ix := q.ix
	lb := math.Inf(1)
	for a := range q.c {
		if q.c[a]-r > 0 {
			lb = min(lb, q.p[a]-(float64(q.c[a]-r)*ix.h-1))
		}
		if q.c[a]+r < ix.g-1 {
			lb = min(lb, (float64(q.c[a]+r+1)*ix.h-1)-q.p[a])
		}
	}
	return math.IsInf(lb, 1) || lb-gridSlack > math.Sqrt(q.best)
}

// nearestGrid answers a grid query on the CPU: goroutines over batches of
// observations, float64 throughout, the same answer as brute force.
func (c *CPU) nearestGrid(ctx context.Context, req Request, out Result, refs *refSet, start time.Time) (Stats, error) {
	end := req.Trace.Begin("host", "plan")
	plan := planGrid(req.Obs, refs, cpuGridCost, req.GridSide)
	end()
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
	batch := req.BatchSize
	if batch == 0 {
		batch = 4096
	}
	st, err := c.run(ctx, req, batch, start, func() func(lo, hi int) {
		return func(lo, hi int) {
			for i := lo; i < hi; i++ {
				x, y, z := unit(req.Obs.At(i))
				d, k := ix.nearest(x, y, z, nil)
				out.Index[i] = refs.orig[k]
				out.Distance[i] = float32(ChordToAngle(d))
			}
		}
	})
	st.Note = plan.note()
	return st, err
}
