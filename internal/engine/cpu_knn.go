package engine

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"slices"
	"time"
)

// walk visits, shell by shell around the unit vector p, the cells the
// sphere crosses whose box lies within sqrt(bound()) of p, and stops once
// everything beyond the shells scanned is farther than that: bound is read
// again as the search narrows it (k nearest) or stays put (a radius). It is
// the grid search of gridIndex.nearest for any number of answers.
func (ix *gridIndex) walk(p [3]float64, bound func() float64, visit func(cell int)) {
	ix.walkWithin(p, bound, func(c int) bool { visit(c); return true }, ix.g)
}

// walkWithin is walk over at most shells shells, stopped where visit
// returns false; it reports whether every cell within the bound was
// visited.
func (ix *gridIndex) walkWithin(p [3]float64, bound func() float64, visit func(cell int) bool, shells int) bool {
	q := gridSearch{ix: ix, p: p, c: ix.cells(p[0], p[1], p[2])}
	stopped := false
	each := func(c int) { stopped = stopped || !visit(c) }
	for r := 0; r < ix.g; r++ {
		if r == shells {
			return false
		}
		if q.walkShell(r, bound, each); stopped {
			return false
		}
		q.best = math.Max(0, math.Sqrt(bound())-ix.slack)
		q.best *= q.best
		if q.done(r) {
			return true
		}
	}
	return true
}

// walkShell visits the cells at Chebyshev distance r within the bound.
func (q *gridSearch) walkShell(r int, bound func() float64, visit func(cell int)) {
	ix, g, cz := q.ix, q.ix.g, q.c[2]
	for i := max(q.c[0]-r, 0); i <= min(q.c[0]+r, g-1); i++ {
		bx := q.boxDist(i, 0)
		for j := max(q.c[1]-r, 0); j <= min(q.c[1]+r, g-1); j++ {
			by := q.boxDist(j, 1)
			if bx*bx+by*by > bound() {
				continue
			}
			runs := ix.runs[4*(i*g+j) : 4*(i*g+j)+4]
			edge := abs(i-q.c[0]) == r || abs(j-q.c[1]) == r
			for h := 0; h < 2; h++ {
				for k := max(int(runs[2*h]), cz-r); k <= min(int(runs[2*h+1]), cz+r); k++ {
					if !edge && k != cz-r && k != cz+r {
						k = cz + r - 1 // interior column: jump to the far z face
						continue
					}
					if bz := q.boxDist(k, 2); bx*bx+by*by+bz*bz <= bound() {
						visit((i*g+j)*g + k)
					}
				}
			}
		}
	}
}

// neighbour is one candidate answer: its squared chord and reference index.
type neighbour struct {
	d2 float64
	id uint32
}

// before orders neighbours by distance, ties to the lower index.
func (a neighbour) before(b neighbour) bool { return a.d2 < b.d2 || (a.d2 == b.d2 && a.id < b.id) }

// topK keeps the k best neighbours seen, the worst on top of a heap.
type topK struct {
	k     int
	items []neighbour
}

func (t *topK) Len() int           { return len(t.items) }
func (t *topK) Less(i, j int) bool { return t.items[j].before(t.items[i]) }
func (t *topK) Swap(i, j int)      { t.items[i], t.items[j] = t.items[j], t.items[i] }
func (t *topK) Push(x any)         { t.items = append(t.items, x.(neighbour)) }
func (t *topK) Pop() any {
	last := t.items[len(t.items)-1]
	t.items = t.items[:len(t.items)-1]
	return last
}

// offer adds n if it is among the k best so far.
func (t *topK) offer(n neighbour) {
	switch {
	case len(t.items) < t.k:
		heap.Push(t, n)
	case n.before(t.items[0]):
		t.items[0] = n
		heap.Fix(t, 0)
	}
}

// full reports whether k neighbours are held; worst is the k-th best.
func (t *topK) full() bool       { return len(t.items) == t.k }
func (t *topK) worst() neighbour { return t.items[0] }
func (t *topK) sorted() []neighbour {
	sortNeighbours(t.items)
	return t.items
}

// kNearest returns the k references nearest to p within the squared chord
// maxD2 (chordLimit of the distance limit; math.Inf(1): none), nearest
// first, ties to the lower index.
func (ix *gridIndex) kNearest(p [3]float64, k int, maxD2 float64, t *topK) []neighbour {
	t.k, t.items = k, t.items[:0]
	limit := ix.chordBound(maxD2)
	bound := func() float64 {
		if t.full() {
			return min(limit, ix.chordBound(t.worst().d2))
		}
		return limit
	}
	ix.walk(p, bound, func(c int) {
		for r := ix.start[c]; r < ix.start[c+1]; r++ {
			if d := chord2(p[0], p[1], p[2], ix.x[r], ix.y[r], ix.z[r]); d <= maxD2 {
				t.offer(neighbour{d, ix.id[r]})
			}
		}
	})
	return t.sorted()
}

// within appends to dst the references within the squared chord maxD2 of
// p (chordLimit of the radius), nearest first, ties to the lower index.
func (ix *gridIndex) within(p [3]float64, maxD2 float64, dst []neighbour) []neighbour {
	limit := ix.chordBound(maxD2)
	ix.walk(p, func() float64 { return limit }, func(c int) {
		for r := ix.start[c]; r < ix.start[c+1]; r++ {
			if d := chord2(p[0], p[1], p[2], ix.x[r], ix.y[r], ix.z[r]); d <= maxD2 {
				dst = append(dst, neighbour{d, ix.id[r]})
			}
		}
	})
	sortNeighbours(dst)
	return dst
}

// sortNeighbours orders ns nearest first, ties to the lower index.
func sortNeighbours(ns []neighbour) {
	slices.SortFunc(ns, func(a, b neighbour) int {
		if a.before(b) {
			return -1
		}
		return 1
	})
}

// count is len(within(p, maxD2, nil)) without the list: the references
// within the squared chord maxD2 of p.
func (ix *gridIndex) count(p [3]float64, maxD2 float64) uint32 {
	limit := ix.chordBound(maxD2)
	n := uint32(0)
	ix.walk(p, func() float64 { return limit }, func(c int) {
		for r := ix.start[c]; r < ix.start[c+1]; r++ {
			if chord2(p[0], p[1], p[2], ix.x[r], ix.y[r], ix.z[r]) <= maxD2 {
				n++
			}
		}
	})
	return n
}

// chordLimit is the largest float64 squared chord whose angle
// (ChordToAngle) is at most rad radians, +Inf from pi on (everything): a
// reference at squared chord d is within rad exactly when d <= chordLimit(rad),
// decided with no arcsine a pair, and the GPU kernels decide on the same
// number.
func chordLimit(rad float64) float64 {
	if rad >= math.Pi {
		return math.Inf(1)
	}
	c := 2 * math.Sin(rad/2)
	d := c * c
	// The two are a few units in the last place apart at most; the bound
	// only guards against a library arcsine that is not monotone.
	for range 1 << 10 {
		if d <= 0 || ChordToAngle(d) <= rad {
			break
		}
		d = math.Nextafter(d, math.Inf(-1))
	}
	for range 1 << 10 {
		up := math.Nextafter(d, math.Inf(1))
		if ChordToAngle(up) > rad {
			break
		}
		d = up
	}
	return d
}

// NoNeighbour marks the entries of a k-nearest row past the references
// found within the query's distance limit.
const NoNeighbour = ^uint32(0)

// KResult receives k answers an observation, row-major: observation i's are
// entries [i*K, (i+1)*K), nearest first, ties to the lower index; where
// fewer than K references lie within the distance limit the row ends in
// NoNeighbour indices and +Inf distances (radians).
type KResult struct {
	K        int
	Index    []uint32
	Distance []float32
}

// KNearest answers the k nearest references of every observation within
// maxRad radians (math.Inf(1): no limit), exactly, on the CPU: the grid
// widens its shells until the k-th best is proven (Brute: every reference).
// Exact duplicates among the references are listed one by one.
func (c *CPU) KNearest(ctx context.Context, req Request, maxRad float64, out KResult) (Stats, error) {
	start := time.Now()
	k := out.K
	if err := checkK(req, maxRad, out); err != nil {
		return Stats{}, err
	}
	refs := req.all()
	search := c.kSearch(req, refs, k, maxRad)
	if err := ctx.Err(); err != nil { // the index built, before the query
		return Stats{}, err
	}
	st, err := c.run(ctx, req, cpuBatch, start, func() func(lo, hi int) {
		t := &topK{}
		return func(lo, hi int) {
			for i := lo; i < hi; i++ {
				x, y, z := unit(req.Obs.At(i))
				fillRow(out, i, search([3]float64{x, y, z}, t))
			}
		}
	})
	st.Note = fmt.Sprintf("%d nearest of %d references", k, refs.n)
	return st, err
}

// kSearch is the per-observation k-nearest search of the request's
// algorithm: brute force, a fitted grid of the side the request fixes, or
// else the k-d tree, which ranks fewer references than the grid walk on
// every set measured (BENCHMARKS.md, "Skewed references on the CPU").
func (c *CPU) kSearch(req Request, refs *refSet, k int, maxRad float64) func(p [3]float64, t *topK) []neighbour {
	maxD2 := chordLimit(maxRad)
	if req.Algorithm == Brute {
		return func(p [3]float64, t *topK) []neighbour { return bruteK(p, refs, k, maxD2, t) }
	}
	if req.GridSide > 0 {
		ix := buildFittedGrid(refs, cappedSide(req.GridSide, refs.n))
		return func(p [3]float64, t *topK) []neighbour { return ix.kNearest(p, k, maxD2, t) }
	}
	tr := req.allTree(refs)
	return func(p [3]float64, t *topK) []neighbour { return tr.kNearest(p, k, maxD2, t) }
}

// bruteK ranks every reference.
func bruteK(p [3]float64, refs *refSet, k int, maxD2 float64, t *topK) []neighbour {
	t.k, t.items = k, t.items[:0]
	for j := range refs.x {
		if d := chord2(p[0], p[1], p[2], refs.x[j], refs.y[j], refs.z[j]); d <= maxD2 {
			t.offer(neighbour{d, uint32(j)})
		}
	}
	return t.sorted()
}

// fillRow writes observation i's neighbours into its row of out.
func fillRow(out KResult, i int, ns []neighbour) {
	row, dist := out.Index[i*out.K:(i+1)*out.K], out.Distance[i*out.K:(i+1)*out.K]
	for j := range row {
		if j < len(ns) {
			row[j], dist[j] = ns[j].id, float32(ChordToAngle(ns[j].d2))
		} else {
			row[j], dist[j] = NoNeighbour, float32(math.Inf(1))
		}
	}
}

func checkK(req Request, maxRad float64, out KResult) error {
	if err := checkPoints(req, true); err != nil {
		return err
	}
	n := req.Obs.Len()
	if out.K < 1 || out.K > req.Ref.Len() {
		return fmt.Errorf("k = %d: want 1 to the %d references", out.K, req.Ref.Len())
	}
	if len(out.Index) != n*out.K || len(out.Distance) != n*out.K {
		return fmt.Errorf("result has room for %d indices and %d distances, want %d", len(out.Index), len(out.Distance), n*out.K)
	}
	if !(maxRad > 0) {
		return fmt.Errorf("maximum distance %v rad: want a positive distance", maxRad)
	}
	return nil
}

// WithinResult is the answer of a radius query: Counts[i] references lie
// within the radius of observation i; with lists, they are
// Index[Offsets[i]:Offsets[i+1]] with their Distance (radians), nearest
// first, ties to the lower index.
type WithinResult struct {
	Counts   []uint32
	Offsets  []uint64
	Index    []uint32
	Distance []float32
}

// Within answers, for every observation, the references within rad
// radians (the boundary decided on the float64 angle: a reference at
// distance rad is in), their count and, with list, the references
// themselves, exactly, on the CPU.
func (c *CPU) Within(ctx context.Context, req Request, rad float64, list bool) (WithinResult, Stats, error) {
	start := time.Now()
	if err := checkPoints(req, true); err != nil {
		return WithinResult{}, Stats{}, err
	}
	if !(rad >= 0) || math.IsInf(rad, 1) {
		return WithinResult{}, Stats{}, fmt.Errorf("radius %v rad: want a finite distance, 0 or more", rad)
	}
	n := req.Obs.Len()
	refs := req.all()
	side := c.radiusSide(req, refs.n)
	maxD2 := chordLimit(rad)
	// A radius of more than two cells of the planned grid goes through the
	// k-d tree, which skips boxes beyond it and counts a box wholly inside
	// at once; the grid ranks every reference in every cell it visits. One
	// of the two is built.
	var tree *kdTree
	var ix *gridIndex
	if _, cube := fittedCube(refs); req.GridSide == 0 && math.Sqrt(maxD2) > 2*cube/float64(side) {
		tree = req.allTree(refs)
	} else {
		ix = req.allGrid(refs, side)
	}
	res := WithinResult{Counts: make([]uint32, n)}
	batches := make([][]neighbour, (n+cpuBatch-1)/cpuBatch)
	st, err := c.run(ctx, req, cpuBatch, start, func() func(lo, hi int) {
		var scratch []neighbour
		return func(lo, hi int) {
			var found []neighbour
			for i := lo; i < hi; i++ {
				x, y, z := unit(req.Obs.At(i))
				p := [3]float64{x, y, z}
				switch {
				case !list && tree != nil:
					res.Counts[i] = tree.count(p, maxD2)
					continue
				case !list:
					res.Counts[i] = ix.count(p, maxD2)
					continue
				case tree != nil:
					scratch = tree.within(p, maxD2, scratch[:0])
				default:
					scratch = ix.within(p, maxD2, scratch[:0])
				}
				res.Counts[i] = uint32(len(scratch))
				found = append(found, scratch...)
			}
			batches[lo/cpuBatch] = found
		}
	})
	if err != nil {
		return WithinResult{}, st, err
	}
	if list {
		res.gather(batches)
	}
	st.Note = fmt.Sprintf("within %.6g rad of %d references", rad, refs.n)
	return res, st, nil
}

// radiusSide is the request's grid side, or one of about two references a
// cell the sphere crosses.
func (c *CPU) radiusSide(req Request, nref int) int {
	if req.GridSide > 0 {
		return cappedSide(req.GridSide, nref)
	}
	return max(4, gridSide(nref, 2))
}

// gather concatenates the batches' lists, in observation order.
func (r *WithinResult) gather(batches [][]neighbour) {
	r.Offsets = make([]uint64, len(r.Counts)+1)
	for i, c := range r.Counts {
		r.Offsets[i+1] = r.Offsets[i] + uint64(c)
	}
	total := r.Offsets[len(r.Counts)]
	r.Index, r.Distance = make([]uint32, 0, total), make([]float32, 0, total)
	for _, b := range batches {
		for _, nb := range b {
			r.Index = append(r.Index, nb.id)
			r.Distance = append(r.Distance, float32(ChordToAngle(nb.d2)))
		}
	}
}
