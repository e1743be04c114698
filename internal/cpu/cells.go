package cpu

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"time"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/parallel"
)

// The CPU's face cells: the GPU's cells.cu in float64. The sphere is cut as
// the six faces of the cube [-1, 1]^3 seen from the centre, each face into
// side x side cells of equal steps in its gnomonic coordinates (u, v) =
// (p[b], p[c]) / |p[a]| (a the face's axis, b and c the next two), so a
// cell is exactly the cone of its four corner rays. Each cell keeps the
// list of references that can be nearest somewhere in it, and an
// observation ranks only its own cell's list: no observation sort, no
// stop test, answers written in input order.
//
// A reference r leaves a cell's list when another, q, beats it at all four
// corners by faceDomEps in dot product: a point p of the cell is a
// non-negative combination of the corners with weights summing to at least
// 1, so p . q exceeds p . r by faceDomEps too, a squared chord 2 faceDomEps
// nearer, far above float64 rounding. The candidates lie within chord
// d0 + 2 alpha of the cell's centre (d0 the centre's nearest reference,
// alpha the chord to the farthest corner), which the build collects from
// the references' k-d tree. A cell whose list would be longer than
// faceCap splits into faceSplitN^2 cells, each collecting its own, at most
// faceLevels times; where a list still cannot be made (references crowded
// into one spot, or a ring of them equally far from the cell) the k-d tree
// answers that cell's observations. A cell that may split does so as
// soon as faceSplitSurvive first-filter survivors say it must, its list
// not tried. Only an index past maxFacePlaces cells is refused, and the
// plan's index answers.
// The build runs level by level on every goroutine, in tiles of up to
// faceTileN^2 neighbouring cells: one tree walk gathers a pool of the
// references near a tile, which its cells scan four at a time
// (cells_pool.go), and a tile whose pool would be too large (crowded
// references) walks the tree for each cell. The query runs in groups
// whose memory is asked for a stage ahead (faceQueries).

const (
	faceSplitN = 4     // a split cell's children an edge
	faceCap    = 32    // candidates a list holds; a longer one splits
	faceLevels = 4     // times a cell may split: a 4^4-times finer edge where references crowd
	faceDilate = 1e-12 // cell widening in (u, v): far above the float64 rounding of a point's (u, v)
	faceDomEps = 1e-12 // dot-product margin of the build's filters
	// faceNeedSlack widens a cell's ball (chord d0 + 2 alpha) far above
	// the rounding of d0 and alpha.
	faceNeedSlack = 1e-12
	faceSurvive   = 8192 // first-filter survivors beyond which a cell splits or has no list
	// faceSplitSurvive is the first-filter survivors at which a cell that
	// may split stops and splits, when those it has say it should, its
	// list not tried: few such lists come out short, and each costs a
	// sort and a second filter as long.
	faceSplitSurvive = 256
	faceSplit        = 1 << 31 // a head's n: a split cell (first: its first child's place)
	faceTree         = 1 << 30 // a head's n: a cell without a list, which the k-d tree answers
	// maxFacePlaces bounds the cells of all levels (8 bytes a cell).
	maxFacePlaces = 16 << 20
)

// faceBlock is four candidates of a list, laid out for lanes1AVX2: their
// unit vectors lane by lane, their distinct-reference indices (ties) and
// input indices (the answer), two cache lines; a list is padded to whole
// blocks with NaN candidates, which rank nowhere.
type faceBlock struct {
	x, y, z  [4]float64
	id, orig [4]uint32
}

// faceHead is a cell's entry: its list (blocks from first, n candidates),
// or, when n has faceSplit set, its first child's place, or, when n is
// faceTree, no list.
type faceHead struct {
	first, n uint32
}

// faceIndex is the face-cell index: heads by place (the side x side cells
// of the six faces first, face by face, row by row, then the children of
// split cells, faceSplitN^2 in a row) and the lists' blocks.
type faceIndex struct {
	side   int
	head   []faceHead
	blocks []faceBlock
	tree   *index.KDTree // answers the cells without a list (nil: none)
	orig   []uint32      // the references' input indices, for the tree's answers
	// For the note: the cells split, the levels below the first, the
	// candidates in all lists and the longest, the cells without a list.
	split, levels, entries, longest, treeCells int
}

// faceSpot is where a point lies on the first level: its cell's place and
// its coordinates in cell units.
type faceSpot struct {
	place  int
	uf, vf float64
}

// top is the first-level cell of unit vector (x, y, z). Each product is
// rounded on its own (the conversions keep the compiler from fusing
// them), as top4's vector code rounds it.
func (fc *faceIndex) top(x, y, z float64) faceSpot {
	a, m, u, v := faceAxis(x, y, z)
	inv := 1 / math.Abs(m)
	half := 0.5 * float64(fc.side)
	uf, vf := (float64(u*inv)+1)*half, (float64(v*inv)+1)*half
	f := 2 * a
	if m < 0 {
		f++
	}
	return faceSpot{place: (f*fc.side+clampCell(uf, fc.side))*fc.side + clampCell(vf, fc.side), uf: uf, vf: vf}
}

// faceSpots are top's answers for four unit vectors, field by field.
type faceSpots struct {
	place  [4]int32
	uf, vf [4]float64
}

// top4 is top of four unit vectors u (x, then y, then z), through
// faceTop4AVX2 where the CPU has AVX2: the same cells and bits, without
// the branches of the face's choice.
func (fc *faceIndex) top4(u *[12]float64, s *faceSpots) {
	if index.HaveAVX2FMA {
		faceTop4AVX2(u, fc.side, 0.5*float64(fc.side), s)
		return
	}
	fc.top4Go(u, s)
}

func (fc *faceIndex) top4Go(u *[12]float64, s *faceSpots) {
	for e := range 4 {
		t := fc.top(u[e], u[4+e], u[8+e])
		s.place[e], s.uf[e], s.vf[e] = int32(t.place), t.uf, t.vf
	}
}

// resolve is the list of the cell at spot, down through the split cells.
// The coordinates in cell units are refined exactly at each level (the
// integer part subtracted, a product by a power of two), so every level
// sees the same rounding of (u, v).
func (fc *faceIndex) resolve(at faceSpot) (first, n uint32) {
	h := fc.head[at.place]
	if h.n&faceSplit == 0 {
		return h.first, h.n
	}
	uf, vf := at.uf, at.vf
	i, j := clampCell(uf, fc.side), clampCell(vf, fc.side)
	for h.n&faceSplit != 0 {
		uf, vf = (uf-float64(i))*faceSplitN, (vf-float64(j))*faceSplitN
		i, j = clampCell(uf, faceSplitN), clampCell(vf, faceSplitN)
		h = fc.head[int(h.first)+i*faceSplitN+j]
	}
	return h.first, h.n
}

// faceAxis is the cube face's axis a of unit vector p (its largest
// coordinate, x before y before z on ties), that coordinate m, and the
// next two (u, v) unscaled.
func faceAxis(x, y, z float64) (a int, m, u, v float64) {
	ax, ay, az := math.Abs(x), math.Abs(y), math.Abs(z)
	switch {
	case ax >= ay && ax >= az:
		return 0, x, y, z
	case ay >= az:
		return 1, y, z, x
	}
	return 2, z, x, y
}

// clampCell is the cell of coordinate x (in cell units, above -1: a unit
// vector's (u, v) lies within rounding of [-1, 1]) among n: truncation is
// the floor from 0 up, and below 0 it gives the clamped cell 0 too.
func clampCell(x float64, n int) int {
	return min(int(x), n-1)
}

// faceCell is cell (i, j) of face f, n cells a face edge.
type faceCell struct{ f, i, j, n int }

// firstChild is the first of c's faceSplitN^2 cells of the next level,
// which lie in a square from it.
func (c faceCell) firstChild() faceCell {
	return faceCell{c.f, c.i * faceSplitN, c.j * faceSplitN, c.n * faceSplitN}
}

// faceGeom is a cell's (widened) corner rays as unit vectors, its centre
// and alpha, the chord from the centre to its farthest corner.
type faceGeom struct {
	corner [4][3]float64
	centre [3]float64
	alpha  float64
}

func (c faceCell) geometry() faceGeom {
	step := 2 / float64(c.n)
	u := [2]float64{-1 + float64(c.i)*step - faceDilate, -1 + float64(c.i+1)*step + faceDilate}
	v := [2]float64{-1 + float64(c.j)*step - faceDilate, -1 + float64(c.j+1)*step + faceDilate}
	var g faceGeom
	g.centre = c.point(0.5*(u[0]+u[1]), 0.5*(v[0]+v[1]))
	for k := range 4 {
		p := c.point(u[k&1], v[k>>1])
		g.corner[k] = p
		g.alpha = max(g.alpha, math.Sqrt(index.Chord2(p[0], p[1], p[2], g.centre[0], g.centre[1], g.centre[2])))
	}
	return g
}

// point is the unit vector of the cell's face at (u, v).
func (c faceCell) point(u, v float64) [3]float64 {
	a := c.f >> 1
	var p [3]float64
	p[a] = 1
	if c.f&1 != 0 {
		p[a] = -1
	}
	p[(a+1)%3], p[(a+2)%3] = u, v
	s := 1 / math.Sqrt(p[0]*p[0]+p[1]*p[1]+p[2]*p[2])
	return [3]float64{p[0] * s, p[1] * s, p[2] * s}
}

// cornerDots are the dot products of the corners with reference k.
func (g *faceGeom) cornerDots(refs *index.RefSet, k uint32) [4]float64 {
	return g.cornerDotsOf(refs.X[k], refs.Y[k], refs.Z[k])
}

// cornerDotsOf are the dot products of the corners with (x, y, z).
func (g *faceGeom) cornerDotsOf(x, y, z float64) [4]float64 {
	var d [4]float64
	for c := range 4 {
		d[c] = g.corner[c][0]*x + g.corner[c][1]*y + g.corner[c][2]*z
	}
	return d
}

// faceOut is a built cell: its list (candidates nearest its centre first),
// or its children when it split.
type faceOut struct {
	ids  []uint32
	kids []faceOut
	tree bool // no list: the k-d tree answers
}

// faceBuilder is one goroutine's scratch for the build.
type faceBuilder struct {
	refs  *index.RefSet
	trees *lazyTree
	grid  *index.GridIndex // the first level's pools' index; nil: the tree
	surv  []faceSurvivor
	// sortSurvivors' scratch: the keys, and the survivors in order.
	keys   []faceKey
	sorted []faceSurvivor
	arena  []uint32 // the lists it made, sliced out
	// A tile's pool, its most references (faceTilePool), and a cell's
	// filter of it.
	pool     facePool
	poolMost int
	cell     facePoolCell
	// The second filter's scratch: the kept survivors' corner dots, and
	// their places.
	keptDots [4][faceKeptMax]float64
	keptAt   [faceKeptMax]int32
}

// faceSurvivor is a reference that passed a cell's first filter: its
// squared chord from the cell's centre and its corner dots.
type faceSurvivor struct {
	id   uint32
	d2   float64
	dots [4]float64
}

// buildTile builds the cells of tile t, level splits above them, and
// returns which split (bit a*faceTileN+b for cell (a, b)). The cells take
// their candidates from one pool of the references near the tile when it
// holds at most b.poolMost, else each walks the tree. A tile of one cell
// pools only from the grid, sparing the tree's build. A tile that needs
// the tree before it is built waits, none of its cells built, and wait
// says why; built again with retry set to that, it skips what the first
// try found.
func (b *faceBuilder) buildTile(t *faceTile, level int, retry faceWait) (splits uint16, wait faceWait) {
	var gs [faceTileN * faceTileN]faceGeom
	for a := range t.rows {
		for c := range t.cols {
			gs[a*faceTileN+c] = t.cell(a, c).geometry()
		}
	}
	gridLevel := level == 0 && b.grid != nil
	pooled, gathered := false, true
	if (t.rows*t.cols > 1 || gridLevel) && b.poolMost > 0 && retry != faceWalk {
		pooled, gathered = b.gatherPool(gs[:], t, gridLevel && retry != faceGatherFromTree)
		pooled = pooled && len(b.pool.id) > 0
	}
	switch {
	case !gathered:
		return 0, faceGatherFromTree
	case !pooled && b.trees.built() == nil:
		return 0, faceWalk
	}
	for a := range t.rows {
		for c := range t.cols {
			o := t.out(a, c)
			var split bool
			if o.ids, split, o.tree = b.build(&gs[a*faceTileN+c], level, pooled); split {
				splits |= 1 << (a*faceTileN + c)
			}
		}
	}
	return splits, faceReady
}

// faceWait is why a first-level tile waits for the tree.
type faceWait uint8

const (
	faceReady          faceWait = iota // it does not: built
	faceGatherFromTree                 // the grid cannot gather its pool: the tree does
	faceWalk                           // its pool would be too large (or empty): its cells walk the tree
)

// gatherPool fills b.pool with every reference within reach of the
// tile's cells' balls: around a centre c of the tile, the chord d_c to
// c's nearest reference plus, for the farthest cell, twice its centre's
// chord from c and twice its alpha. A cell's nearest reference then lies
// within its centre's chord from c plus that chord plus d_c, and so does
// every reference within d0 + 2 alpha of its centre. pooled is false, the
// pool unusable, past b.poolMost references. fromGrid gathers through
// b.grid instead of the tree; gathered is false where the grid cannot
// decide and the tree is not built yet.
func (b *faceBuilder) gatherPool(gs []faceGeom, t *faceTile, fromGrid bool) (pooled, gathered bool) {
	var c [3]float64
	for a := range t.rows {
		for k := range t.cols {
			g := &gs[a*faceTileN+k]
			c[0], c[1], c[2] = c[0]+g.centre[0], c[1]+g.centre[1], c[2]+g.centre[2]
		}
	}
	s := 1 / math.Sqrt(c[0]*c[0]+c[1]*c[1]+c[2]*c[2])
	c = [3]float64{c[0] * s, c[1] * s, c[2] * s}
	reach := 0.0
	for a := range t.rows {
		for k := range t.cols {
			g := &gs[a*faceTileN+k]
			reach = max(reach, 2*math.Sqrt(index.Chord2(c[0], c[1], c[2], g.centre[0], g.centre[1], g.centre[2]))+2*g.alpha)
		}
	}
	if fromGrid {
		if pooled, decided := b.gatherFromGrid(c, reach); decided {
			return pooled, true
		}
	}
	tree := b.trees.built()
	if tree == nil {
		return false, false
	}
	dc2, _ := tree.Nearest(c[0], c[1], c[2], nil)
	return b.pool.gather(tree, c, poolChord(dc2, reach), b.poolMost), true
}

// poolChord is the chord of a tile's pool around a centre whose nearest
// reference lies at squared chord dc2, reach farther than its cells'
// balls.
func poolChord(dc2, reach float64) float64 { return math.Sqrt(dc2) + reach + facePoolSlack }

// build makes the list of the cell of geometry g, or says that it splits;
// level counts the splits above it. It says noList when no list can be
// made and the cell may not split. pooled says that b.pool holds every
// candidate of the cell.
func (b *faceBuilder) build(g *faceGeom, level int, pooled bool) (ids []uint32, split, noList bool) {
	p := g.centre
	var d2 float64
	var q0 uint32
	at := 0 // q0's place in the pool
	if pooled {
		d2, at = b.pool.nearest(&p)
	} else {
		d2, q0 = b.trees.built().Nearest(p[0], p[1], p[2], nil) // built: buildTile walks only once it is
	}
	d0 := math.Sqrt(d2)
	need := d0 + 2*g.alpha + faceNeedSlack
	filter := func(most int, resume bool) float64 {
		if pooled {
			return b.poolFilter(g, at, need, most, resume)
		}
		return b.firstFilter(g, q0, need, most)
	}
	// A list too long splits the cell where a finer one keeps fewer: near
	// its references, or far from them when the survivors lie at depths
	// from the centre that a child's narrower band tells apart. A cell
	// that may split stops at faceSplitSurvive survivors when those it has
	// say so: few such lists come out short (BENCHMARKS), and each costs a
	// sort and a second filter as long. Each child tile gathers its own
	// pool: handing down the parent's survivors measured slower when each
	// child walked the tree, its boxes pruning more than a long list does.
	splitsBy := func(reach float64) bool { return d0 <= 2*g.alpha || reach-d0 > 0.5*g.alpha }
	var reach float64
	if level >= faceLevels {
		reach = filter(faceSurvive, false)
	} else if reach = filter(faceSplitSurvive, false); len(b.surv) > faceSplitSurvive {
		if splitsBy(reach) {
			return nil, true, false
		}
		reach = filter(faceSurvive, true)
	}
	splits := level < faceLevels && splitsBy(reach)
	if len(b.surv) <= faceSurvive {
		b.sortSurvivors()
		start := len(b.arena)
		b.arena = b.secondFilter(b.arena, faceCap+1)
		if n := len(b.arena) - start; n <= faceCap {
			return b.arena[start:len(b.arena):len(b.arena)], false, false
		}
		b.arena = b.arena[:start]
	}
	return nil, splits, !splits
}

// firstFilter puts in b.surv the references within chord need of the
// cell's centre that q0 (the centre's nearest) does not beat at every
// corner, in the tree's order, stopping past most; it returns the
// farthest one's chord from the centre. A reference nearest
// somewhere in the cell lies within d0 + 2 alpha of the centre and is
// beaten nowhere, so it passes. The tree walk skips every box that is
// beyond the chord or beaten by q0 at every corner; its stack is inline,
// as in the tree's own walks.
func (b *faceBuilder) firstFilter(g *faceGeom, q0 uint32, need float64, most int) float64 {
	t, p := b.trees.built(), g.centre
	dq := g.cornerDots(b.refs, q0)
	need2, limit := need*need, index.FittedChordBound(need*need)
	b.surv = b.surv[:0]
	reach := 0.0
	var stack [64]int32
	n := 1
	for n > 0 && len(b.surv) <= most {
		n--
		nd := &t.Nodes[stack[n]]
		if nd.BoxDist2(p) > limit || g.boxBeaten(nd, &dq) {
			continue
		}
		if nd.Left >= 0 {
			stack[n], stack[n+1] = nd.Left, nd.Right
			n += 2
			continue
		}
		for r := nd.Start; r < nd.End; r++ {
			d2 := index.Chord2(p[0], p[1], p[2], t.X[r], t.Y[r], t.Z[r])
			if d2 > need2 {
				continue
			}
			d := g.cornerDotsOf(t.X[r], t.Y[r], t.Z[r])
			if t.ID[r] != q0 && beats(&dq, &d) {
				continue
			}
			b.surv = append(b.surv, faceSurvivor{id: t.ID[r], d2: d2, dots: d})
			reach = max(reach, d2)
		}
	}
	return math.Sqrt(reach)
}

// poolFilter is firstFilter over b.pool, whose chords from the centre
// pool.nearest left in pool.d2, q0 at place at; its vector scan tests
// q0's margin as q0's dot product less faceDomEps, a rounding of beats'
// test. With resume it goes on where the cell's last call stopped.
func (b *faceBuilder) poolFilter(g *faceGeom, at int, need float64, most int, resume bool) float64 {
	pl := &b.pool
	if !resume {
		dq := g.cornerDotsOf(pl.x[at], pl.y[at], pl.z[at])
		b.cell.set(g, &dq, need*need)
		pl.survivors(&b.cell)
		b.surv = b.surv[:0]
	}
	for _, k := range pl.found[len(b.surv):] {
		b.surv = append(b.surv, faceSurvivor{id: pl.id[k], d2: pl.d2[k], dots: g.cornerDotsOf(pl.x[k], pl.y[k], pl.z[k])})
		if len(b.surv) > most {
			break
		}
	}
	reach := 0.0
	for k := range b.surv {
		reach = max(reach, b.surv[k].d2)
	}
	return math.Sqrt(reach)
}

// sortSurvivors orders b.surv nearest the centre first, ties by index,
// through keys of a third its size: an insertion sort for the short lists
// of most cells (the tree's leaves come roughly by distance),
// slices.SortFunc past that.
func (b *faceBuilder) sortSurvivors() {
	n := len(b.surv)
	if n < 2 {
		return
	}
	keys := b.keys[:0]
	for k := range b.surv {
		keys = append(keys, faceKey{index.Neighbour{D2: b.surv[k].d2, ID: b.surv[k].id}, int32(k)})
	}
	b.keys = keys
	if n > 32 {
		slices.SortFunc(keys, func(a, b faceKey) int {
			if a.Before(b.Neighbour) {
				return -1
			}
			return 1 // keys are never equal: their indices differ
		})
	} else {
		for i := 1; i < n; i++ {
			v := keys[i]
			j := i
			for ; j > 0 && v.Before(keys[j-1].Neighbour); j-- {
				keys[j] = keys[j-1]
			}
			keys[j] = v
		}
	}
	sorted := index.Grow(b.sorted, n)
	for k, key := range keys {
		sorted[k] = b.surv[key.at]
	}
	b.surv, b.sorted = sorted, b.surv
}

// faceKey is a survivor's sort key (its squared chord and index, ordered
// as neighbours are) and place.
type faceKey struct {
	index.Neighbour
	at int32
}

// boxBeaten tells whether corner dots dq beat every point of node n's box
// at every corner: the box's largest dot product with each corner (the
// larger end of each axis's span) is below dq's by faceDomEps.
func (g *faceGeom) boxBeaten(n *index.KDNode, dq *[4]float64) bool {
	for k := range 4 {
		c := &g.corner[k]
		m := max(c[0]*n.Lo[0], c[0]*n.Hi[0]) + max(c[1]*n.Lo[1], c[1]*n.Hi[1]) + max(c[2]*n.Lo[2], c[2]*n.Hi[2])
		if dq[k]-m <= faceDomEps {
			return false
		}
	}
	return true
}

// beats tells whether the reference of corner dots q is nearer than that
// of corner dots r at every corner by faceDomEps: everywhere in the cell.
func beats(q, r *[4]float64) bool {
	return q[0]-r[0] > faceDomEps && q[1]-r[1] > faceDomEps && q[2]-r[2] > faceDomEps && q[3]-r[3] > faceDomEps
}

// secondFilter appends to out the survivors that no other beats at every
// corner, in b.surv's order, stopping once it has appended stop (at most
// faceKeptMax). A reference beaten everywhere in the cell is beaten at
// its centre too, so only those nearer the centre, before it in b.surv,
// can beat it; and one beaten by a survivor that is itself beaten is
// beaten by the survivor's beater too, its margins adding up, so only the
// kept survivors need be tried.
func (b *faceBuilder) secondFilter(out []uint32, stop int) []uint32 {
	for _, t := range b.keptAt[:secondFilterPlaces(b.surv, stop, &b.keptDots, &b.keptAt)] {
		out = append(out, b.surv[t].id)
	}
	return out
}

// buildFaceCells builds the face cells of side cells a face edge over refs
// on team's workers, level by level: the children of the cells one
// level splits are the next level's work, so a crowded region's cells
// spread over every worker of team. The first level's pools come from a
// fitted grid unless trees holds a tree already; the rest from the tree,
// built on team between the steps when a level first needs it
// (buildLevel). It returns nil and why when the cells of all levels would
// pass maxFacePlaces.
func buildFaceCells(ctx context.Context, refs *index.RefSet, trees *lazyTree, side int, team *parallel.Team, mem *faceMemory) (*faceIndex, string, error) {
	return buildFaceCellsPooled(ctx, refs, trees, side, team, mem, faceTilePool, trees.built() == nil)
}

// faceMemory is memory a face index may take its lists and heads from
// (a nil one: none), and leaves them in when it is done with them, and
// the build's scratch: the cells' outcomes (the first level's, then each
// level's children's), the workers' builders and the layout's spans.
type faceMemory struct {
	head     []faceHead
	blocks   []faceBlock
	outs     []faceOut
	kids     [faceLevels][]faceOut
	builders []*faceBuilder
	spans    []faceSpan
}

// takeBuilders is a builder for each of workers, from m's where it has
// them, set for this build; their scratch and lists' arena are kept.
func (m *faceMemory) takeBuilders(workers int, refs *index.RefSet, trees *lazyTree, grid *index.GridIndex, poolMost int) []*faceBuilder {
	for len(m.builders) < workers {
		m.builders = append(m.builders, &faceBuilder{})
	}
	bs := m.builders[:workers]
	for _, b := range bs {
		b.refs, b.trees, b.grid, b.poolMost, b.arena = refs, trees, grid, poolMost, b.arena[:0]
	}
	return bs
}

// letGo drops the kept builders' hold on the last build's references,
// tree and grid.
func (m *faceMemory) letGo() {
	for _, b := range m.builders {
		b.refs, b.trees, b.grid = nil, nil, nil
	}
}

// cleared is n outcomes from mem (kept in *mem for the next build), set
// to none on team's workers.
func cleared(mem *[]faceOut, n int, team *parallel.Team) []faceOut {
	outs := index.Grow(*mem, n)
	*mem = outs
	team.Blocks(n, 1<<12, func(_, lo, hi int) { clear(outs[lo:hi]) })
	return outs
}

// release leaves fc's lists and heads in m for another index; a nil m
// keeps nothing.
func (m *faceMemory) release(fc *faceIndex) {
	if m != nil {
		m.head, m.blocks = fc.head, fc.blocks
	}
}

// buildFaceCellsPooled is buildFaceCells with tile pools of at most
// poolMost references (0: every cell walks the tree), the first level's
// from a grid when fromGrid is set.
func buildFaceCellsPooled(ctx context.Context, refs *index.RefSet, trees *lazyTree, side int, team *parallel.Team, mem *faceMemory, poolMost int, fromGrid bool) (*faceIndex, string, error) {
	var grid *index.GridIndex
	if fromGrid {
		end := trees.trace.Begin("host", "face cells, grid")
		grid = faceGridFor(refs, side, team)
		end()
	}
	if mem == nil {
		mem = &faceMemory{}
	}
	outs := cleared(&mem.outs, index.FaceCells(side), team)
	var tiles []faceTile
	for f := range 6 {
		tiles = tilesOf(faceCell{f: f, n: side}, side, outs[f*side*side:], side, tiles)
	}
	// A builder for every worker any level may use: the levels below can
	// have more cells than the first.
	builders := mem.takeBuilders(team.Workers(), refs, trees, grid, poolMost)
	defer mem.letGo()
	places := len(outs)
	for level := 0; len(tiles) > 0; level++ {
		var cells int
		end := trees.trace.Begin("host", fmt.Sprintf("face cells, level %d", level))
		tiles, cells = buildLevel(ctx, tiles, level, builders, team, mem)
		if end(); ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		if places += cells; places > maxFacePlaces {
			return nil, fmt.Sprintf("over %d cells", maxFacePlaces), nil
		}
	}
	end := trees.trace.Begin("host", "face cells, layout")
	fc := &faceIndex{side: side, orig: refs.Orig}
	fc.assemble(outs, refs, team, mem)
	end()
	if fc.treeCells > 0 {
		fc.tree = trees.buildOn(team)
	}
	return fc, "", nil
}

const (
	// faceTileN is a tile's edge in cells: a tile's cells share one walk
	// of the references' tree.
	faceTileN = 4
	// faceTilePool is the most references a tile's pool holds; a tile
	// whose pool would hold more (references crowded near it) walks the
	// tree for each cell.
	faceTilePool = 1024
	// facePoolSlack widens a pool's chord beyond its cells' balls'
	// faceNeedSlack and far beyond the rounding of the chords it is made
	// of.
	facePoolSlack = 1e-9
)

// faceTile is up to faceTileN x faceTileN neighbouring cells of one face
// and level (first-level cells, or a split cell's children) that the
// build takes together.
type faceTile struct {
	c          faceCell  // its first cell
	rows, cols int       // its cells down and across
	outs       []faceOut // cell (a, b)'s outcome at a*stride+b
	stride     int
}

func (t *faceTile) cell(a, b int) faceCell { return faceCell{t.c.f, t.c.i + a, t.c.j + b, t.c.n} }
func (t *faceTile) out(a, b int) *faceOut  { return &t.outs[a*t.stride+b] }

// tilesOf appends to dst the tiles of a square of n x n cells from c,
// their outcomes in outs at stride a row.
func tilesOf(c faceCell, n int, outs []faceOut, stride int, dst []faceTile) []faceTile {
	for a := 0; a < n; a += faceTileN {
		for b := 0; b < n; b += faceTileN {
			dst = append(dst, faceTile{c: faceCell{c.f, c.i + a, c.j + b, c.n}, rows: min(faceTileN, n-a),
				cols: min(faceTileN, n-b), outs: outs[a*stride+b:], stride: stride})
		}
	}
	return dst
}

// buildLevel builds the cells of one level's tiles; it returns the tiles
// of the children of those that split, in the order of their parents
// whatever the goroutines' timing, and how many cells they hold. The
// tree is built first where every tile of the level may walk it (a level
// below the first, or no grid), else once the level's other tiles are
// built, if any tile could not do without it.
func buildLevel(ctx context.Context, tiles []faceTile, level int, builders []*faceBuilder, team *parallel.Team, mem *faceMemory) ([]faceTile, int) {
	trees := builders[0].trees
	if level > 0 || builders[0].grid == nil {
		trees.buildOn(team)
	}
	splits, wait := make([]uint16, len(tiles)), make([]faceWait, len(tiles))
	team.Blocks(len(tiles), 1, func(w, lo, hi int) {
		if ctx.Err() != nil {
			return
		}
		for k := lo; k < hi; k++ {
			splits[k], wait[k] = builders[w].buildTile(&tiles[k], level, faceReady)
		}
	})
	var waiting []int
	for k := range wait {
		if wait[k] != faceReady {
			waiting = append(waiting, k)
		}
	}
	if len(waiting) > 0 && ctx.Err() == nil {
		trees.buildOn(team)
		team.Blocks(len(waiting), 1, func(w, lo, hi int) {
			for _, k := range waiting[lo:hi] {
				splits[k], _ = builders[w].buildTile(&tiles[k], level, wait[k])
			}
		})
	}
	split := 0
	for _, s := range splits {
		split += bits.OnesCount16(s)
	}
	if split == 0 {
		return nil, 0
	}
	kids := cleared(&mem.kids[level], split*faceSplitN*faceSplitN, team)
	next := make([]faceTile, 0, split*faceSplitN*faceSplitN/(faceTileN*faceTileN))
	for k := range tiles {
		t := &tiles[k]
		for a := range t.rows {
			for b := range t.cols {
				if splits[k]>>(a*faceTileN+b)&1 == 0 {
					continue
				}
				o, c := t.out(a, b), t.cell(a, b)
				o.kids, kids = kids[:faceSplitN*faceSplitN:faceSplitN*faceSplitN], kids[faceSplitN*faceSplitN:]
				next = tilesOf(c.firstChild(), faceSplitN, o.kids, faceSplitN, next)
			}
		}
	}
	return next, split * faceSplitN * faceSplitN
}

// faceSpan is what a first-level cell's subtree takes: its descendants'
// places, its blocks, and for the note its splits, depth, candidates and
// longest list.
type faceSpan struct {
	places, blocks, split, levels, entries, longest, tree int
}

func (o *faceOut) span(level int) faceSpan {
	if o.tree {
		return faceSpan{levels: level, tree: 1}
	}
	if o.kids == nil {
		return faceSpan{blocks: (len(o.ids) + 3) / 4, levels: level, entries: len(o.ids), longest: len(o.ids)}
	}
	sp := faceSpan{places: len(o.kids), split: 1}
	for k := range o.kids {
		c := o.kids[k].span(level + 1)
		sp.places += c.places
		sp.blocks += c.blocks
		sp.split += c.split
		sp.levels = max(sp.levels, c.levels)
		sp.entries += c.entries
		sp.longest = max(sp.longest, c.longest)
		sp.tree += c.tree
	}
	return sp
}

// assemble lays out the built cells on team's workers: the first
// level at places 0 .. len(outs)-1, then each first-level cell's
// descendants in a range of their own (children in a row, depth first),
// its blocks likewise; in mem's memory where it has some.
func (fc *faceIndex) assemble(outs []faceOut, refs *index.RefSet, team *parallel.Team, mem *faceMemory) {
	spans := index.Grow(mem.spans, len(outs))
	mem.spans = spans
	team.Blocks(len(outs), faceLayoutBlock, func(_, lo, hi int) {
		for k := lo; k < hi; k++ {
			spans[k] = outs[k].span(0)
		}
	})
	places, blocks := len(outs), 0
	for k := range spans { // each span's places and blocks become its first ones
		sp := &spans[k]
		fc.split += sp.split
		fc.levels = max(fc.levels, sp.levels)
		fc.entries += sp.entries
		fc.longest = max(fc.longest, sp.longest)
		fc.treeCells += sp.tree
		places, sp.places = places+sp.places, places
		blocks, sp.blocks = blocks+sp.blocks, blocks
	}
	// place writes every head and block: none needs clearing.
	fc.head, fc.blocks = index.Grow(mem.head, places), index.Grow(mem.blocks, blocks)
	team.Blocks(len(outs), faceLayoutBlock, func(_, lo, hi int) {
		for k := lo; k < hi; k++ {
			next, block := spans[k].places, spans[k].blocks
			fc.place(k, &outs[k], &next, &block, refs)
		}
	})
}

// faceLayoutBlock is the first-level cells a step of the layout takes at
// a time: few enough that a crowded region's split cells spread over the
// workers.
const faceLayoutBlock = 64

// place writes cell o at place at: its list's blocks from *block, or its
// children from *next (their subtrees after them), advancing both.
func (fc *faceIndex) place(at int, o *faceOut, next, block *int, refs *index.RefSet) {
	if o.tree {
		fc.head[at] = faceHead{n: faceTree}
		return
	}
	if o.kids == nil {
		fc.head[at] = faceHead{first: uint32(*block), n: uint32(len(o.ids))}
		*block += fillBlocks(fc.blocks[*block:], o.ids, refs)
		return
	}
	first := *next
	fc.head[at] = faceHead{first: uint32(first), n: faceSplit}
	*next += len(o.kids)
	for k := range o.kids {
		fc.place(first+k, &o.kids[k], next, block, refs)
	}
}

// fillBlocks writes the blocks of a list of candidates into dst and
// returns how many.
func fillBlocks(dst []faceBlock, ids []uint32, refs *index.RefSet) int {
	nan := math.NaN()
	n := (len(ids) + 3) / 4
	for s := range n {
		b := &dst[s]
		for l := range 4 {
			e := 4*s + l
			if e >= len(ids) {
				b.x[l], b.y[l], b.z[l], b.id[l], b.orig[l] = nan, nan, nan, math.MaxUint32, math.MaxUint32
				continue
			}
			id := ids[e]
			b.x[l], b.y[l], b.z[l], b.id[l], b.orig[l] = refs.X[id], refs.Y[id], refs.Z[id], id, refs.Orig[id]
		}
	}
	return n
}

// note says how the cells came out.
func (fc *faceIndex) note() string {
	finer := ""
	if fc.levels > 0 {
		finer = fmt.Sprintf(" (%d split into %d finer levels)", fc.split, fc.levels)
	}
	tree := ""
	if fc.treeCells > 0 {
		tree = fmt.Sprintf(", %d cells without a list answered by the k-d tree", fc.treeCells)
	}
	leaves := len(fc.head) - fc.split - fc.treeCells
	return fmt.Sprintf("face cells 6 x %d^2%s, %.1f candidates a cell (at most %d)%s, no observation sort",
		fc.side, finer, float64(fc.entries)/float64(max(leaves, 1)), fc.longest, tree)
}

// rank is the nearest of the n candidates from block first to o: its
// squared chord, block and lane. The list is ranked by dot product; a
// winner whose lead is within dotMargin is re-ranked by chord2, ties to
// the lowest index, as the grid's tile is.
func (fc *faceIndex) rank(o *[3]float64, first, n uint32) (float64, *faceBlock, int) {
	blocks := fc.blocks[first : first+(n+3)/4]
	x, y, z := o[0], o[1], o[2]
	best, runup, e := rankLanes1(o, blocks)
	if best-runup > dotMargin {
		b, l := &blocks[e>>2], e&3
		return index.Chord2(x, y, z, b.x[l], b.y[l], b.z[l]), b, l
	}
	d2, bb, bl := math.Inf(1), &blocks[0], 0
	for s := range blocks {
		b := &blocks[s]
		for l := range 4 {
			if b.id[l] == math.MaxUint32 {
				continue
			}
			if d := index.Chord2(x, y, z, b.x[l], b.y[l], b.z[l]); d < d2 || (d == d2 && b.id[l] < bb.id[bl]) {
				d2, bb, bl = d, b, l
			}
		}
	}
	return d2, bb, bl
}

// useFaces tells whether the CPU answers nobs observations against nref
// references through face cells: the build costs about what answering 4 to
// 8 observations a reference through the grid saves (measured on 2^16
// sphere references), so fewer take the plan's index.
func useFaces(nobs, nref int) bool { return nobs >= max(cellOrderMin, faceObsPerRef*nref) }

const faceObsPerRef = 8

// nearestFaces answers the request through fc in input order, in batches
// on every goroutine.
func (c *CPU) nearestFaces(ctx context.Context, req request, out engine.Result, refs *index.RefSet, fc *faceIndex, start time.Time) (engine.Stats, error) {
	batch := req.BatchSize
	if batch == 0 {
		batch = 4096
	}
	return c.run(ctx, req, batch, start, func() func(lo, hi int) {
		var q faceQueries
		return func(lo, hi int) { q.answer(req.Obs, lo, hi, fc, out) }
	})
}

// faceGroup is the observations a stage of the query pipeline takes at a
// time; a multiple of 4 (unit4, chordToAngle4).
const faceGroup = 16

// faceQueries is a goroutine's pipeline: three groups of observations in
// flight, each a stage behind the one before.
type faceQueries struct {
	g [3]faceObs
}

// faceObs is a group of observations on its way through the pipeline:
// from lo, m of them.
type faceObs struct {
	lo, m int
	p     [faceGroup][3]float64
	spot  [faceGroup / 4]faceSpots
	first [faceGroup]uint32
	n     [faceGroup]uint32
	d2    [faceGroup]float64
}

// answer answers observations [lo, hi) in groups through three stages,
// each asking for the memory the next reads, a whole group's work ahead:
// unit vectors and first-level cells (the heads prefetched); the lists
// (the blocks prefetched); the ranking and the answers.
func (q *faceQueries) answer(obs index.Points, lo, hi int, fc *faceIndex, out engine.Result) {
	groups := (hi - lo + faceGroup - 1) / faceGroup
	for s := 0; s < groups+2; s++ {
		if s < groups {
			g := &q.g[s%3]
			g.lo = lo + s*faceGroup
			g.m = min(faceGroup, hi-g.lo)
			g.locate(obs, fc)
		}
		if s >= 1 && s-1 < groups {
			q.g[(s-1)%3].lists(fc)
		}
		if s >= 2 {
			q.g[(s-2)%3].rank(fc, out)
		}
	}
}

// locate finds the group's unit vectors (four at a time) and first-level
// cells, and asks for their heads.
func (g *faceObs) locate(obs index.Points, fc *faceIndex) {
	for k := 0; k < g.m; k += 4 {
		var u [12]float64
		index.UnitsFrom(obs, g.lo+k, min(4, g.m-k), &u)
		s := &g.spot[k/4]
		fc.top4(&u, s)
		for e := range min(4, g.m-k) {
			g.p[k+e] = [3]float64{u[e], u[4+e], u[8+e]}
			prefetchHead(&fc.head[s.place[e]])
		}
	}
}

// lists finds the group's lists and asks for their blocks.
func (g *faceObs) lists(fc *faceIndex) {
	for k := range g.m {
		s, e := &g.spot[k/4], k%4
		g.first[k], g.n[k] = fc.resolve(faceSpot{place: int(s.place[e]), uf: s.uf[e], vf: s.vf[e]})
		if g.n[k] != faceTree {
			prefetchBlocks(&fc.blocks[g.first[k]], int(g.n[k]+3)/4)
		}
	}
}

// rank answers the group: each observation's list ranked, then the
// distances converted four at a time.
func (g *faceObs) rank(fc *faceIndex, out engine.Result) {
	for k := range g.m {
		if g.n[k] == faceTree {
			p := &g.p[k]
			d, id := fc.tree.Nearest(p[0], p[1], p[2], nil)
			g.d2[k], out.Index[g.lo+k] = d, fc.orig[id]
			continue
		}
		d, b, l := fc.rank(&g.p[k], g.first[k], g.n[k])
		g.d2[k] = d
		out.Index[g.lo+k] = b.orig[l]
	}
	for k := 0; k < g.m; k += 4 { // past m: earlier chords, converted and dropped
		var rad [4]float64
		index.ChordToAngle4((*[4]float64)(g.d2[k:k+4]), &rad)
		for e := range min(4, g.m-k) {
			out.Distance[g.lo+k+e] = float32(rad[e])
		}
	}
}
