package index

import (
	"container/heap"
	"math"
	"slices"
)

// walk visits, shell by shell around the unit vector p, the cells the
// sphere crosses whose box lies within sqrt(bound()) of p, and stops once
// everything beyond the shells scanned is farther than that: bound is read
// again as the search narrows it (k nearest) or stays put (a radius). It is
// the grid search of gridIndex.nearest for any number of answers.
func (ix *GridIndex) walk(p [3]float64, bound func() float64, visit func(cell int)) {
	ix.WalkWithin(p, bound, func(c int) bool { visit(c); return true }, ix.G)
}

// WalkWithin is walk over at most shells shells, stopped where visit
// returns false; it reports whether every cell within the bound was
// visited.
func (ix *GridIndex) WalkWithin(p [3]float64, bound func() float64, visit func(cell int) bool, shells int) bool {
	q := GridSearch{Ix: ix, P: p, C: ix.cells(p[0], p[1], p[2])}
	stopped := false
	each := func(c int) { stopped = stopped || !visit(c) }
	for r := 0; r < ix.G; r++ {
		if r == shells {
			return false
		}
		if q.walkShell(r, bound, each); stopped {
			return false
		}
		q.Best = math.Max(0, math.Sqrt(bound())-ix.slack)
		q.Best *= q.Best
		if q.Done(r) {
			return true
		}
	}
	return true
}

// walkShell visits the cells at Chebyshev distance r within the bound.
func (q *GridSearch) walkShell(r int, bound func() float64, visit func(cell int)) {
	ix, g, cz := q.Ix, q.Ix.G, q.C[2]
	for i := max(q.C[0]-r, 0); i <= min(q.C[0]+r, g-1); i++ {
		bx := q.boxDist(i, 0)
		for j := max(q.C[1]-r, 0); j <= min(q.C[1]+r, g-1); j++ {
			by := q.boxDist(j, 1)
			if bx*bx+by*by > bound() {
				continue
			}
			runs := ix.Runs[4*(i*g+j) : 4*(i*g+j)+4]
			edge := abs(i-q.C[0]) == r || abs(j-q.C[1]) == r
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

// Neighbour is one candidate answer: its squared chord and reference index.
type Neighbour struct {
	D2 float64
	ID uint32
}

// Before orders neighbours by distance, ties to the lower index.
func (a Neighbour) Before(b Neighbour) bool { return a.D2 < b.D2 || (a.D2 == b.D2 && a.ID < b.ID) }

// TopK keeps the k best neighbours seen, the worst on top of a heap.
type TopK struct {
	K     int
	Items []Neighbour
}

func (t *TopK) Len() int           { return len(t.Items) }
func (t *TopK) Less(i, j int) bool { return t.Items[j].Before(t.Items[i]) }
func (t *TopK) Swap(i, j int)      { t.Items[i], t.Items[j] = t.Items[j], t.Items[i] }
func (t *TopK) Push(x any)         { t.Items = append(t.Items, x.(Neighbour)) }
func (t *TopK) Pop() any {
	last := t.Items[len(t.Items)-1]
	t.Items = t.Items[:len(t.Items)-1]
	return last
}

// Offer adds n if it is among the k best so far.
func (t *TopK) Offer(n Neighbour) {
	switch {
	case len(t.Items) < t.K:
		heap.Push(t, n)
	case n.Before(t.Items[0]):
		t.Items[0] = n
		heap.Fix(t, 0)
	}
}

// full reports whether k neighbours are held; worst is the k-th best.
func (t *TopK) full() bool       { return len(t.Items) == t.K }
func (t *TopK) worst() Neighbour { return t.Items[0] }
func (t *TopK) Sorted() []Neighbour {
	sortNeighbours(t.Items)
	return t.Items
}

// KNearest returns the k references nearest to p within the squared chord
// maxD2 (chordLimit of the distance limit; math.Inf(1): none), nearest
// first, ties to the lower index.
func (ix *GridIndex) KNearest(p [3]float64, k int, maxD2 float64, t *TopK) []Neighbour {
	t.K, t.Items = k, t.Items[:0]
	limit := ix.ChordBound(maxD2)
	bound := func() float64 {
		if t.full() {
			return min(limit, ix.ChordBound(t.worst().D2))
		}
		return limit
	}
	ix.walk(p, bound, func(c int) {
		for r := ix.Start[c]; r < ix.Start[c+1]; r++ {
			if d := Chord2(p[0], p[1], p[2], ix.X[r], ix.Y[r], ix.Z[r]); d <= maxD2 {
				t.Offer(Neighbour{d, ix.ID[r]})
			}
		}
	})
	return t.Sorted()
}

// Within appends to dst the references within the squared chord maxD2 of
// p (chordLimit of the radius), nearest first, ties to the lower index.
func (ix *GridIndex) Within(p [3]float64, maxD2 float64, dst []Neighbour) []Neighbour {
	limit := ix.ChordBound(maxD2)
	ix.walk(p, func() float64 { return limit }, func(c int) {
		for r := ix.Start[c]; r < ix.Start[c+1]; r++ {
			if d := Chord2(p[0], p[1], p[2], ix.X[r], ix.Y[r], ix.Z[r]); d <= maxD2 {
				dst = append(dst, Neighbour{d, ix.ID[r]})
			}
		}
	})
	sortNeighbours(dst)
	return dst
}

// sortNeighbours orders ns nearest first, ties to the lower index.
func sortNeighbours(ns []Neighbour) {
	slices.SortFunc(ns, func(a, b Neighbour) int {
		if a.Before(b) {
			return -1
		}
		return 1
	})
}

// Count is len(within(p, maxD2, nil)) without the list: the references
// within the squared chord maxD2 of p.
func (ix *GridIndex) Count(p [3]float64, maxD2 float64) uint32 {
	limit := ix.ChordBound(maxD2)
	n := uint32(0)
	ix.walk(p, func() float64 { return limit }, func(c int) {
		for r := ix.Start[c]; r < ix.Start[c+1]; r++ {
			if Chord2(p[0], p[1], p[2], ix.X[r], ix.Y[r], ix.Z[r]) <= maxD2 {
				n++
			}
		}
	})
	return n
}

// ChordLimit is the largest float64 squared chord whose angle
// (ChordToAngle) is at most rad radians, +Inf from pi on (everything): a
// reference at squared chord d is within rad exactly when d <= chordLimit(rad),
// decided with no arcsine a pair, and the GPU kernels decide on the same
// number.
func ChordLimit(rad float64) float64 {
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
