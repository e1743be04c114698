package index

import (
	"math"

	"github.com/geoknn/geoknn/internal/parallel"
)

// KDTree is the CPU engine's index for references no grid suits: crowded
// into a few metres, or queried from far away, where a grid either puts
// them all in one cell or walks shells of empty cells around the
// observation. It splits the references' unit vectors at the median of the
// widest axis (of a sample) down to leaves of kdLeaf, and keeps each node's
// bounding box,
// so a query descends nearest box first and skips every box farther than
// the best found: exact, float64 chords, ties to the lowest index.
type KDTree struct {
	Nodes []KDNode
	KDColumns
}

// KDNode is a box of references [start, end) in leaf order; a leaf has no
// children (left < 0).
type KDNode struct {
	Lo, Hi      [3]float64
	Start, End  int32
	Left, Right int32
}

const KDLeaf = 8 // references a leaf holds at most

// BuildKDTree builds the tree over refs, on a team of its own when they
// are many.
func BuildKDTree(refs *RefSet) *KDTree { return BuildKDTreeIn(refs, nil) }

// BuildKDTreeIn is buildKDTree in mem's memory (nil: fresh memory).
func BuildKDTreeIn(refs *RefSet, mem *KDMemory) *KDTree {
	if refs.N < KDParallelMin {
		return BuildKDTreeOn(refs, nil, mem)
	}
	team := parallel.NewTeam(0)
	defer team.Close()
	return BuildKDTreeOn(refs, team, mem)
}

// BuildKDTreeOn builds the tree over refs on team's workers (nil: one
// goroutine), in mem's memory where it has some (nil: none); it hands the
// team steps, so it must not run inside one.
//
// The top levels split level by level: while a level has fewer nodes than
// half the workers, their selections share every worker; then a node a
// worker, until there are kdSubtrees subtrees a worker, which a last step
// builds, one a worker at a time. The tree is the same for any team.
func BuildKDTreeOn(refs *RefSet, team *parallel.Team, mem *KDMemory) *KDTree {
	n := refs.N
	run := serialBlocks
	if team != nil {
		run = team.Blocks
	}
	if mem == nil {
		mem = &KDMemory{}
	}
	// Every point, node and column is written below: none needs clearing.
	pts := Grow(mem.pts, n)
	run(n, 1<<13, func(_, lo, hi int) {
		for k := lo; k < hi; k++ {
			pts[k] = KDPoint{C: [3]float64{refs.X[k], refs.Y[k], refs.Z[k]}, ID: uint32(k)}
		}
	})
	sizes := kdSizes{}
	t := &KDTree{Nodes: Grow(mem.nodes, sizes.nodes(n))}
	cols := KDColumns{X: Grow(mem.cols.X, n), Y: Grow(mem.cols.Y, n), Z: Grow(mem.cols.Z, n), ID: Grow(mem.cols.ID, n)}
	b := kdBuild{t: t, pts: pts, cols: cols, sizes: sizes}
	if team == nil {
		b.build(kdSpan{0, 0, n})
	} else {
		b.buildOn(team)
	}
	run(n, 1<<13, func(_, lo, hi int) {
		for k := lo; k < hi; k++ {
			cols.set(k, &pts[k])
		}
	})
	t.KDColumns = cols
	*mem = KDMemory{pts: pts} // the tree's own arrays come back with release
	return t
}

// KDMemory is memory a tree may be built in (a nil one: none): the build's
// scratch, and the arrays of a tree that is done with.
type KDMemory struct {
	pts   []KDPoint
	nodes []KDNode
	cols  KDColumns
}

// Release leaves t's arrays in m for another tree; a nil m keeps nothing.
// Nothing may read t after.
func (m *KDMemory) Release(t *KDTree) {
	if m != nil && t != nil {
		m.nodes, m.cols = t.Nodes, t.KDColumns
	}
}

// kdSubtrees is the subtrees a worker that buildOn's last step builds:
// enough that workers finishing early take another.
const kdSubtrees = 4

// kdSpan is a node to build: its place, and its references [start, end).
type kdSpan struct {
	at         int32
	start, end int
}

func (s kdSpan) mid() int { return (s.start + s.end) / 2 }

// buildOn builds the tree on team's workers.
func (b *kdBuild) buildOn(team *parallel.Team) {
	workers := team.Workers()
	level := []kdSpan{{0, 0, len(b.pts)}}
	var inner []int32 // the nodes split above the subtrees, parents first
	for len(level) > 0 && len(level) < kdSubtrees*workers {
		kids := make([][2]kdSpan, len(level))
		split := make([]bool, len(level))
		if 2*len(level) < workers { // few, large nodes: their selections share every worker
			b.splitLevel(level, kids, split, team)
		} else {
			team.Blocks(len(level), 1, func(_, lo, hi int) {
				for k := lo; k < hi; k++ {
					kids[k], split[k] = b.split(level[k], serialBlocks)
				}
			})
		}
		var next []kdSpan
		for k := range level {
			if split[k] {
				inner = append(inner, level[k].at)
				next = append(next, kids[k][0], kids[k][1])
			}
		}
		level = next
	}
	team.Blocks(len(level), 1, func(_, lo, hi int) {
		for k := lo; k < hi; k++ {
			b.build(level[k])
		}
	})
	for k := len(inner) - 1; k >= 0; k-- {
		b.join(inner[k])
	}
}

// splitLevel is split for each node of level at once, their selections'
// passes in shared steps of team; kids[k] and split[k] are node k's.
func (b *kdBuild) splitLevel(level []kdSpan, kids [][2]kdSpan, split []bool, team *parallel.Team) {
	jobs := make([]kdSelectJob, 0, len(level))
	for k, s := range level {
		var axis int
		if axis, split[k] = b.open(s); split[k] {
			jobs = append(jobs, kdSelectJob{pts: b.pts[s.start:s.end], scratch: b.cols.Slice(s.start, s.end),
				nth: s.mid() - s.start, axis: axis})
		}
	}
	selectNthMany(jobs, team.Blocks)
	for k, s := range level {
		if split[k] {
			kids[k] = b.children(s)
		}
	}
}

// build makes node s and its subtree on the calling goroutine.
func (b *kdBuild) build(s kdSpan) {
	kids, split := b.split(s, serialBlocks)
	if !split {
		return
	}
	b.build(kids[0])
	b.build(kids[1])
	b.join(s.at)
}

// split makes node s: a leaf (false) when open says so, else its
// references split at their median along the widest axis (through run
// when they are many), and its children.
func (b *kdBuild) split(s kdSpan, run blockRunner) ([2]kdSpan, bool) {
	axis, ok := b.open(s)
	if !ok {
		return [2]kdSpan{}, false
	}
	pts, nth := b.pts[s.start:s.end], s.mid()-s.start
	if len(pts) >= KDParallelMin {
		SelectNthParallel(pts, b.cols.Slice(s.start, s.end), nth, axis, run)
	} else {
		SelectNth(pts, nth, axis)
	}
	return b.children(s), true
}

// open writes node s's range; a node of at most kdLeaf references is a
// leaf, given its box (false), any other is split along axis.
func (b *kdBuild) open(s kdSpan) (axis int, split bool) {
	nd := &b.t.Nodes[s.at]
	*nd = KDNode{Start: int32(s.start), End: int32(s.end), Left: -1, Right: -1}
	if s.end-s.start <= KDLeaf {
		nd.Lo, nd.Hi = box(b.pts[s.start:s.end])
		return 0, false
	}
	return widest(b.pts[s.start:s.end]), true
}

// children links split node s to its children, at their pre-order
// places, once its references are split at the median.
func (b *kdBuild) children(s kdSpan) [2]kdSpan {
	left := s.at + 1
	right := left + int32(b.sizes.count(s.mid()-s.start))
	b.t.Nodes[s.at].Left, b.t.Nodes[s.at].Right = left, right
	return [2]kdSpan{{left, s.start, s.mid()}, {right, s.mid(), s.end}}
}

// join makes split node at's box the union of its children's.
func (b *kdBuild) join(at int32) {
	n := &b.t.Nodes[at]
	l, r := &b.t.Nodes[n.Left], &b.t.Nodes[n.Right]
	for a := range 3 {
		n.Lo[a], n.Hi[a] = min(l.Lo[a], r.Lo[a]), max(l.Hi[a], r.Hi[a])
	}
}

// KDPoint is a reference as the build moves it: a swap moves one 32-byte
// value, where the tree's four arrays would take four cache lines.
type KDPoint struct {
	C  [3]float64
	ID uint32
}

// kdBuild is a tree's build: its references in the order the splits
// leave them, and the subtrees' sizes.
type kdBuild struct {
	t     *KDTree
	pts   []KDPoint
	cols  KDColumns // the tree's arrays, selectNthParallel's scratch until the end
	sizes kdSizes
}

// KDColumns is the tree's references in leaf order and their
// distinct-reference indices.
type KDColumns struct {
	X, Y, Z []float64
	ID      []uint32
}

func (c KDColumns) Slice(lo, hi int) KDColumns {
	return KDColumns{X: c.X[lo:hi], Y: c.Y[lo:hi], Z: c.Z[lo:hi], ID: c.ID[lo:hi]}
}

func (c KDColumns) set(k int, p *KDPoint) {
	c.X[k], c.Y[k], c.Z[k], c.ID[k] = p.C[0], p.C[1], p.C[2], p.ID
}

func (c KDColumns) at(k int) KDPoint {
	return KDPoint{C: [3]float64{c.X[k], c.Y[k], c.Z[k]}, ID: c.ID[k]}
}

// kdSizes is the number of nodes of a subtree by its number of
// references: the split at the middle makes it a function of the count
// alone, so a node's children have known places (pre-order: the left
// child next, the right one after the left's subtree) and subtrees can be
// built at once. Filled before the build, read-only during it.
type kdSizes map[int]int

func (s kdSizes) nodes(n int) int {
	if n <= KDLeaf {
		return 1
	}
	if c, ok := s[n]; ok {
		return c
	}
	c := 1 + s.nodes(n/2) + s.nodes(n-n/2)
	s[n] = c
	return c
}

// count is nodes(n) once nodes has filled s for the whole tree: a read,
// safe on concurrent goroutines.
func (s kdSizes) count(n int) int {
	if n <= KDLeaf {
		return 1
	}
	return s[n]
}

// widest is the axis along which pts spread most: a sample of at most 64
// of them decides, as the split only needs a good axis.
func widest(pts []KDPoint) int {
	step := max(1, len(pts)/64)
	lo, hi := pts[0].C, pts[0].C
	for k := 0; k < len(pts); k += step { // one pass: a large node's samples are a cache miss each
		c := &pts[k].C
		for a := range 3 {
			if c[a] < lo[a] {
				lo[a] = c[a]
			} else if c[a] > hi[a] {
				hi[a] = c[a]
			}
		}
	}
	best := 0
	for a := 1; a < 3; a++ {
		if hi[a]-lo[a] > hi[best]-lo[best] {
			best = a
		}
	}
	return best
}

// box is the bounding box of pts.
func box(pts []KDPoint) (lo, hi [3]float64) {
	lo, hi = pts[0].C, pts[0].C
	for k := range pts {
		for a := range 3 {
			if v := pts[k].C[a]; v < lo[a] {
				lo[a] = v
			} else if v > hi[a] {
				hi[a] = v
			}
		}
	}
	return lo, hi
}

// SelectNth reorders pts so that position nth holds the reference that
// sorting by the axis would put there, smaller ones before it and larger
// ones after (quickselect, median-of-three pivots).
func SelectNth(pts []KDPoint, nth, axis int) {
	key := func(i int) float64 { return pts[i].C[axis] }
	lo, hi := 0, len(pts)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if key(mid) < key(lo) {
			pts[mid], pts[lo] = pts[lo], pts[mid]
		}
		if key(hi) < key(lo) {
			pts[hi], pts[lo] = pts[lo], pts[hi]
		}
		if key(hi) < key(mid) {
			pts[hi], pts[mid] = pts[mid], pts[hi]
		}
		pivot := key(mid)
		i, j := lo, hi
		for i <= j {
			for key(i) < pivot {
				i++
			}
			for key(j) > pivot {
				j--
			}
			if i <= j {
				pts[i], pts[j] = pts[j], pts[i]
				i, j = i+1, j-1
			}
		}
		switch {
		case nth <= j:
			hi = j
		case nth >= i:
			lo = i
		default:
			return
		}
	}
}

// BoxDist2 is the squared distance from p to node n's box.
func (n *KDNode) BoxDist2(p [3]float64) float64 {
	d := 0.0
	for a := range 3 { // plain compares: the builtin max, with its NaN rules, measured slower here
		if v := n.Lo[a] - p[a]; v > 0 {
			d += v * v
		} else if v := p[a] - n.Hi[a]; v > 0 {
			d += v * v
		}
	}
	return d
}

// Nearest is gridIndex.nearest through the tree: the squared chord and the
// distinct reference's index; w, when not nil, counts the nodes and
// candidates. The traversals below keep their stacks inline: a shared stack
// type measured 10% slower here and in kNearest (its child push, with two
// box distances, is past the compiler's inlining budget).
func (t *KDTree) Nearest(px, py, pz float64, w *GridWork) (float64, uint32) {
	p := [3]float64{px, py, pz}
	best, bestID := math.Inf(1), uint32(math.MaxUint32)
	bound := math.Inf(1) // boxes farther (squared) cannot hold a better reference
	type pending struct {
		node int32
		d2   float64
	}
	var stack [64]pending
	top := 0
	stack[top] = pending{0, t.Nodes[0].BoxDist2(p)}
	top++
	for top > 0 {
		top--
		e := stack[top]
		if e.d2 > bound {
			continue
		}
		n := &t.Nodes[e.node]
		if w != nil {
			w.cells++
		}
		if n.Left < 0 {
			for k := n.Start; k < n.End; k++ {
				d := Chord2(px, py, pz, t.X[k], t.Y[k], t.Z[k])
				if d < best || (d == best && t.ID[k] < bestID) {
					best, bestID = d, t.ID[k]
					bound = FittedChordBound(best)
				}
			}
			if w != nil {
				w.candidates += int(n.End - n.Start)
			}
			continue
		}
		dl, dr := t.Nodes[n.Left].BoxDist2(p), t.Nodes[n.Right].BoxDist2(p)
		near, far, dn, df := n.Left, n.Right, dl, dr
		if dr < dl {
			near, far, dn, df = n.Right, n.Left, dr, dl
		}
		stack[top] = pending{far, df} // the farther child waits below the nearer
		stack[top+1] = pending{near, dn}
		top += 2
	}
	return best, bestID
}

// FittedChordBound is gridIndex.chordBound with a fitted grid's slack: the
// tree's boxes are float64 bounds of the float64 points themselves.
func FittedChordBound(d2 float64) float64 { return slackBound(d2, fittedSlack) }

// KNearest is gridIndex.kNearest through the tree: the k references nearest
// to p within the squared chord maxD2, nearest first, ties to the lower
// index.
func (t *KDTree) KNearest(p [3]float64, k int, maxD2 float64, top *TopK) []Neighbour {
	top.K, top.Items = k, top.Items[:0]
	limit := FittedChordBound(maxD2) // +Inf for no limit
	bound := limit
	type pending struct {
		node int32
		d2   float64
	}
	var stack [64]pending
	stack[0] = pending{0, t.Nodes[0].BoxDist2(p)}
	for n := 1; n > 0; {
		n--
		e := stack[n]
		if e.d2 > bound {
			continue
		}
		nd := &t.Nodes[e.node]
		if nd.Left < 0 {
			for r := nd.Start; r < nd.End; r++ {
				if d := Chord2(p[0], p[1], p[2], t.X[r], t.Y[r], t.Z[r]); d <= maxD2 {
					top.Offer(Neighbour{d, t.ID[r]})
				}
			}
			if top.full() {
				bound = min(limit, FittedChordBound(top.worst().D2))
			}
			continue
		}
		dl, dr := t.Nodes[nd.Left].BoxDist2(p), t.Nodes[nd.Right].BoxDist2(p)
		near, far, dn, df := nd.Left, nd.Right, dl, dr
		if dr < dl {
			near, far, dn, df = nd.Right, nd.Left, dr, dl
		}
		stack[n], stack[n+1] = pending{far, df}, pending{near, dn}
		n += 2
	}
	return top.Sorted()
}

// Count is the number of references within the squared chord maxD2 of p,
// as gridIndex.count finds them: a box wholly within (its farthest corner
// nearer than maxD2 by more than the rounding of any chord in it) counts
// all its references without ranking them, a box wholly beyond is skipped,
// and the rest are opened.
func (t *KDTree) Count(p [3]float64, maxD2 float64) uint32 {
	limit := FittedChordBound(maxD2)
	inner := maxD2 - kdWholeMargin
	var stack [64]int32
	stack[0] = 0
	n, found := 1, uint32(0)
	for n > 0 {
		n--
		nd := &t.Nodes[stack[n]]
		if nd.BoxDist2(p) > limit {
			continue
		}
		if nd.farDist2(p) < inner {
			found += uint32(nd.End - nd.Start)
			continue
		}
		if nd.Left < 0 {
			for r := nd.Start; r < nd.End; r++ {
				if Chord2(p[0], p[1], p[2], t.X[r], t.Y[r], t.Z[r]) <= maxD2 {
					found++
				}
			}
			continue
		}
		stack[n], stack[n+1] = nd.Left, nd.Right
		n += 2
	}
	return found
}

// kdWholeMargin is more than the float64 rounding of a squared chord (at
// most 4) and of farDist2: a box whose farthest corner lies within maxD2 by
// more holds no reference beyond it.
const kdWholeMargin = 1e-13

// farDist2 is the squared distance from p to the farthest corner of n's box.
func (n *KDNode) farDist2(p [3]float64) float64 {
	d := 0.0
	for a := range 3 {
		v := max(p[a]-n.Lo[a], n.Hi[a]-p[a])
		d += v * v
	}
	return d
}

// Within is gridIndex.within through the tree: appended to dst, the
// references within the squared chord maxD2 of p, nearest first, ties to
// the lower index.
func (t *KDTree) Within(p [3]float64, maxD2 float64, dst []Neighbour) []Neighbour {
	from := len(dst)
	t.LeavesWithin(p, FittedChordBound(maxD2), func(start, end int32) bool {
		for r := start; r < end; r++ {
			if d := Chord2(p[0], p[1], p[2], t.X[r], t.Y[r], t.Z[r]); d <= maxD2 {
				dst = append(dst, Neighbour{d, t.ID[r]})
			}
		}
		return true
	})
	sortNeighbours(dst[from:])
	return dst
}

// LeavesWithin visits the leaves (references [start, end) in leaf order)
// whose boxes lie within the squared chord limit of p, until visit returns
// false; it reports whether it visited them all.
func (t *KDTree) LeavesWithin(p [3]float64, limit float64, visit func(start, end int32) bool) bool {
	var stack [64]int32
	n := 1
	for n > 0 {
		n--
		nd := &t.Nodes[stack[n]]
		if nd.BoxDist2(p) > limit {
			continue
		}
		if nd.Left >= 0 {
			stack[n], stack[n+1] = nd.Left, nd.Right
			n += 2
			continue
		}
		if !visit(nd.Start, nd.End) {
			return false
		}
	}
	return true
}
