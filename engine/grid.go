package engine

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
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

// gridSlack covers the float32 rounding of positions and cell bounds in the
// pruning tests; it only makes the search visit slightly more.
const gridSlack = 1e-6

// maxGridCells bounds the index memory (4 bytes a cell).
const maxGridCells = 1 << 25

// gridSide is the number of cells per axis for n references at a given
// density: the sphere crosses about 4.7 G^2 cells, so G = sqrt(n /
// (4.7 * perCell)).
func gridSide(n int, perCell float64) int {
	g := int(math.Ceil(math.Sqrt(float64(n) / (4.7 * perCell))))
	gmax := int(math.Cbrt(maxGridCells))
	return max(1, min(g, gmax))
}

func cellOf(v float32, g int, h float32) int {
	c := int(math.Floor(float64((v + 1) / h)))
	return max(0, min(c, g-1))
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
// squared chord and the index.
func (ix *gridIndex) nearest(px, py, pz float64, w *gridWork) (float64, uint32) {
	g := ix.g
	h := ix.h
	cx := cellOf(float32(px), g, ix.h32)
	cy := cellOf(float32(py), g, ix.h32)
	cz := cellOf(float32(pz), g, ix.h32)
	best, bestID := math.Inf(1), uint32(math.MaxUint32)
	thr2 := math.Inf(1) // cells farther than this (squared) cannot hold a better reference
	boxDist := func(c int, p float64) float64 {
		lo := float64(c)*h - 1
		if d := lo - p; d > 0 {
			return d
		}
		if d := p - (lo + h); d > 0 {
			return d
		}
		return 0
	}
	for r := 0; r < g; r++ {
		for i := max(cx-r, 0); i <= min(cx+r, g-1); i++ {
			bx := boxDist(i, px)
			for j := max(cy-r, 0); j <= min(cy+r, g-1); j++ {
				by := boxDist(j, py)
				if w != nil {
					w.cells++ // the column test costs about what a cell does
				}
				if bx*bx+by*by > thr2 {
					continue
				}
				// Only the cells of this column that the unit sphere crosses
				// can hold references: two runs of z cells.
				runs := ix.runs[4*(i*g+j) : 4*(i*g+j)+4]
				edge := abs(i-cx) == r || abs(j-cy) == r
				for q := 0; q < 2; q++ {
					lo, hi := max(int(runs[2*q]), cz-r), min(int(runs[2*q+1]), cz+r)
					for k := lo; k <= hi; k++ {
						if !edge && k != cz-r && k != cz+r {
							k = cz + r - 1 // interior column: only the shell's two z faces
							continue
						}
						bz := boxDist(k, pz)
						if w != nil {
							w.cells++
						}
						if d := bx*bx + by*by + bz*bz; d > thr2 {
							continue
						}
						c := (i*g+j)*g + k
						for p := ix.start[c]; p < ix.start[c+1]; p++ {
							d := chord2(px, py, pz, ix.x[p], ix.y[p], ix.z[p])
							if d < best || (d == best && ix.id[p] < bestID) {
								best, bestID = d, ix.id[p]
								t := math.Sqrt(d) + gridSlack
								thr2 = t * t
							}
						}
						if w != nil {
							w.candidates += int(ix.start[c+1] - ix.start[c])
						}
					}
				}
			}
		}
		// Everything not yet scanned lies outside the cube of cells within
		// Chebyshev distance r; stop once that is farther than the best.
		lb := math.Inf(1)
		for _, a := range [3]struct {
			c int
			p float64
		}{{cx, px}, {cy, py}, {cz, pz}} {
			if a.c-r > 0 {
				lb = min(lb, a.p-(float64(a.c-r)*h-1))
			}
			if a.c+r < g-1 {
				lb = min(lb, (float64(a.c+r+1)*h-1)-a.p)
			}
		}
		if math.IsInf(lb, 1) || lb-gridSlack > math.Sqrt(best) {
			break
		}
	}
	return best, bestID
}

// sphereRunsTable is the runs table of a G^3 grid: for each column (i, j),
// [lo0, hi0, lo1, hi1], its z-cell runs (lo > hi: empty).
func sphereRunsTable(g int) []int16 {
	runs := make([]int16, 4*g*g)
	for i := 0; i < g; i++ {
		for j := 0; j < g; j++ {
			r, n := sphereRuns(g, i, j)
			q := runs[4*(i*g+j):]
			q[0], q[1], q[2], q[3] = 1, 0, 1, 0
			for k := 0; k < n; k++ {
				q[2*k], q[2*k+1] = int16(r[k][0]), int16(r[k][1])
			}
		}
	}
	return runs
}

// sphereRuns returns the runs of z cells [lo, hi] of column (i, j) that the
// unit sphere (with gridSlack) can cross: where |z| lies between
// sqrt(1 - max(x^2+y^2)) and sqrt(1 - min(x^2+y^2)) over the column.
func sphereRuns(g, i, j int) (runs [2][2]int, n int) {
	h := 2 / float64(g)
	near := func(c int) (lo, hi float64) { // min and max of |v| over cell c's span
		a, b := float64(c)*h-1, float64(c+1)*h-1
		if a <= 0 && b >= 0 {
			return 0, max(-a, b)
		}
		return min(math.Abs(a), math.Abs(b)), max(math.Abs(a), math.Abs(b))
	}
	xlo, xhi := near(i)
	ylo, yhi := near(j)
	rmin2, rmax2 := xlo*xlo+ylo*ylo, xhi*xhi+yhi*yhi
	const s = gridSlack
	if rmin2 > (1+s)*(1+s) {
		return runs, 0
	}
	zhi := math.Sqrt(max(0, (1+s)*(1+s)-rmin2))
	zlo := math.Sqrt(max(0, (1-s)*(1-s)-rmax2))
	cellZ := func(z float64) int { return max(0, min(int(math.Floor((z+1)/h)), g-1)) }
	hiRun := [2]int{cellZ(zlo), cellZ(zhi)}
	loRun := [2]int{cellZ(-zhi), cellZ(-zlo)}
	if loRun[1] >= hiRun[0]-1 { // the runs touch: one run
		return [2][2]int{{loRun[0], hiRun[1]}}, 1
	}
	return [2][2]int{loRun, hiRun}, 2
}

func abs(a int) int {
	if a < 0 {
		return -a
	}
	return a
}

// gridPlan is the outcome of planning a grid query: the index to use, or nil
// when the sampled cost says brute force is cheaper (references packed into
// few cells, or observations far from every reference).
type gridPlan struct {
	index *gridIndex
	// Sampled work a query: cells visited and candidates ranked.
	cellsPerQuery, candidatesPerQuery float64
	reason                            string
}

// note describes the plan for Stats.Note.
func (p gridPlan) note() string {
	return fmt.Sprintf("grid %d^3 cells, %.1f cells and %.1f candidates a query (sampled)",
		p.index.g, p.cellsPerQuery, p.candidatesPerQuery)
}

// planGrid builds indexes at several densities, runs a sample of the actual
// observations through each on the CPU and keeps the cheaper, or none when
// brute force would cost less. Costs are in units of one brute-force pair
// (which the tiled kernels and the CPU loop run at full rate); a brute-force
// query costs one pair a reference plus m.bruteQuery.
func planGrid(obs Points, refs *refSet, m gridCost, side int) gridPlan {
	brute := float64(refs.n) + m.bruteQuery
	const sample = 512
	n := obs.Len()
	rng := rand.New(rand.NewPCG(uint64(n), uint64(refs.n)))
	idx := make([]int, min(sample, n))
	for i := range idx {
		if n <= sample {
			idx[i] = i
		} else {
			idx[i] = rng.IntN(n)
		}
	}
	g0 := gridSide(refs.n, 2)
	// The density that suits the references' dense places is too fine where
	// they are sparse (observations far from every reference scan many empty
	// cells), so coarser grids are sampled too and the cheapest kept.
	var sides []int
	for k, f := 0, 1.0; k < 7; k, f = k+1, f/math.Sqrt2 { // g0 down to g0/8 in steps of sqrt 2
		if g := int(math.Round(float64(g0) * f)); g >= 4 && (len(sides) == 0 || g != sides[len(sides)-1]) {
			sides = append(sides, g)
		}
	}
	if len(sides) == 0 {
		sides = []int{g0}
	}
	if side > 0 { // the caller chose the density
		sides = []int{min(side, gridSide(math.MaxInt32, 1))}
	}
	// The sides are sampled concurrently (each builds its own index); a
	// side stops sampling once it is costlier than brute force.
	plans := make([]gridPlan, len(sides))
	costs := make([]float64, len(sides))
	var wg sync.WaitGroup
	for k, g := range sides {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ix := buildGrid(refs, g)
			var w gridWork
			ran := 0
			for _, i := range idx {
				x, y, z := unit(obs.At(i))
				ix.nearest(x, y, z, &w)
				ran++
				if m.unit*(1.5*float64(w.cells)+float64(w.candidates)) > brute*float64(len(idx)) {
					break // already costlier than brute force: stop sampling
				}
			}
			cells := float64(w.cells) / float64(ran)
			cands := float64(w.candidates) / float64(ran)
			costs[k] = m.unit * (1.5*cells + cands)
			plans[k] = gridPlan{index: ix, cellsPerQuery: cells, candidatesPerQuery: cands}
		}()
	}
	wg.Wait()
	bestCost := math.Inf(1)
	var plan gridPlan
	for k := range sides { // ties to the finest side, as the sequential scan did
		if costs[k] < bestCost {
			bestCost, plan = costs[k], plans[k]
		}
	}
	if bestCost > brute && side == 0 {
		plan.reason = fmt.Sprintf("grid would visit %.0f cells and rank %.0f references a query, costlier than brute force over %d",
			plan.cellsPerQuery, plan.candidatesPerQuery, refs.n)
		plan.index = nil
	}
	return plan
}

// The cost model of a grid query, in brute-force pairs: a visited cell (or
// column) costs 1.5 units and a ranked candidate one, and a unit costs
// gpuGridUnitCost or cpuGridUnitCost pairs. Fitted, with the earlier GPU
// kernel (index built on the host), to 2^27-observation queries on the H200 at grid sides 84 down to 15 with uniform, clustered and
// city references (docs/h200-grid-side.log, docs/h200-grid-planner-3to1.log:
// weighting cells 3:1 picked 21^3 for cities, 20% slower than 30^3) and to
// 2^22 x 2^16 on the CPU (a unit about 15 ns of a core, against 0.18 ns a
// brute-force pair in the AVX2 loop).
//
// bruteQuery is brute force's own cost an observation beyond its pairs: on the
// CPU the unit vector, tiles and the final re-rank, about 3,000 pairs' time
// (2^16 x 2^10 took 0.79 us of a core a query, 0.18 us of it pairs;
// docs/bench/dev-cpu-quick.md); on the GPU nothing that matters.
type gridCost struct {
	unit, bruteQuery float64
}

var (
	cpuGridCost = gridCost{unit: 80, bruteQuery: 3000}
	gpuGridCost = gridCost{unit: 130}
)

// nearestGrid answers a grid query on the CPU: goroutines over batches of
// observations, float64 throughout, the same answer as brute force.
func (c *CPU) nearestGrid(ctx context.Context, req Request, out Result, refs *refSet, start time.Time) (Stats, error) {
	plan := planGrid(req.Obs, refs, cpuGridCost, req.GridSide)
	if plan.index == nil {
		st, err := c.nearestBrute(ctx, req, out, refs, start)
		st.Note = "grid fell back to brute force: " + plan.reason
		return st, err
	}
	ix := plan.index
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
