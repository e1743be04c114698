package engine

import (
	"context"
	"math"
	"time"

	"github.com/geoknn/geoknn/internal/kernels"
	"github.com/geoknn/geoknn/internal/parallel"
)

// A large query through the k-d tree runs in chunks of cellChunk
// observations sorted by a cell of a treeOrderSide^3 grid over the unit
// cube: consecutive observations then descend much the same path, whose
// nodes and leaves stay in the core's caches, where observations in input
// order would fetch a fresh path from memory for each; and each starts
// with its predecessor's winner as the bound to prune by, so it skips the
// boxes a blind descent would open before finding one as good. The walk
// reads the packed layout tree.cu walks (nearestPacked).
const treeOrderSide = 64

// treeOrderKey is the cell of (x, y, z) in the ordering grid.
func treeOrderKey(x, y, z float64) uint32 {
	c := func(v float64) uint32 {
		return uint32(min(max(int((v+1)*treeOrderSide/2), 0), treeOrderSide-1))
	}
	return (c(x)*treeOrderSide+c(y))*treeOrderSide + c(z)
}

// nearestTreeOrdered answers req through t in sorted chunks.
func (c *CPU) nearestTreeOrdered(ctx context.Context, req Request, out Result, refs *RefSet, t *kdTree, start time.Time) (Stats, error) {
	n := req.Obs.Len()
	packed, err := packNodes(t)
	if err != nil { // a tree outside the packed layout's bounds: the node-by-node walk
		return c.nearestEach(ctx, req, out, refs, t.nearest, start)
	}
	leafOf := packed.leaves(t.id) // each distinct reference's leaf
	recs, sorted := make([]cellRec, min(n, cellChunk)), make([]cellRec, min(n, cellChunk))
	hist := make([]uint32, treeOrderSide*treeOrderSide*treeOrderSide+1)
	var starts []*treeStart // one a goroutine
	chunks, err := inCellChunks(ctx, req, func(lo, hi int) {
		sortTreeChunk(req.Obs, lo, recs[:hi-lo], sorted[:hi-lo], hist, c.workers)
	}, func(lo, hi int) error {
		for len(starts) < parallel.Workers(hi-lo, 1024, c.workers) {
			starts = append(starts, &treeStart{})
		}
		parallel.Blocks(hi-lo, 1024, c.workers, func(w, a, b int) {
			if ctx.Err() != nil {
				return
			}
			hint, from := uint32(0), starts[w] // a goroutine's start path stays valid: the tree is the query's
			for _, r := range sorted[a:b] {
				d, k := t.nearestPacked(packed, r.x, r.y, r.z, hint, from)
				hint = leafOf[k]
				i := lo + int(r.pos)
				out.Index[i] = refs.Orig[k]
				out.Distance[i] = float32(ChordToAngle(d))
			}
		})
		return nil
	})
	if err != nil {
		return Stats{}, err
	}
	return c.stats(chunks, start), nil
}

// sortTreeChunk fills recs with observations [lo, lo+len(recs)) and sorts
// them into sorted by treeOrderKey (a counting sort; hist is its scratch).
func sortTreeChunk(obs Points, lo int, recs, sorted []cellRec, hist []uint32, workers int) {
	parallel.Blocks(len(recs), 1<<14, workers, func(_, a, b int) {
		for k := a; k < b; k++ {
			x, y, z := Unit(obs.At(lo + k))
			recs[k] = cellRec{x: x, y: y, z: z, cell: treeOrderKey(x, y, z), pos: uint32(k)}
		}
	})
	clear(hist)
	for _, r := range recs {
		hist[r.cell+1]++
	}
	for k := 1; k < len(hist); k++ {
		hist[k] += hist[k-1]
	}
	for _, r := range recs {
		sorted[hist[r.cell]] = r
		hist[r.cell]++
	}
}

// nearestPacked is kdTree.nearest over the tree as tree.cu lays it out (b):
// a visit reads one 64-byte node holding both children's boxes, descends
// to the nearer child and keeps the farther for later, where nearest reads
// three nodes and pushes both. Boxes are float32 rounded outwards, so their
// distances never exceed the float64 boxes' and nothing is pruned that
// nearest keeps; the leaves are ranked in float64 as nearest ranks them.
func (t *kdTree) nearestPacked(b *GpuTree, px, py, pz float64, hint uint32, from *treeStart) (float64, uint32) {
	best, bestID := math.Inf(1), uint32(math.MaxUint32)
	if hint != 0 { // a leaf to take the first bound from
		first := int(hint&^kernels.TreeLeaf) >> 4
		for k := first; k < first+int(hint&15); k++ {
			if d := Chord2(px, py, pz, t.x[k], t.y[k], t.z[k]); d < best || (d == best && t.id[k] < bestID) {
				best, bestID = d, t.id[k]
			}
		}
	}
	bound := fittedChordBound(best)
	type pending struct {
		node uint32
		d2   float64
	}
	var stack [kernels.TreeStack]pending
	top := 0
	cur := uint32(0)
	if from != nil && hint != 0 {
		cur = from.find(b, [3]float64{px, py, pz}, math.Sqrt(bound))
	}
	for {
		n := (*[16]float32)(b.Nodes[16*cur : 16*cur+16])
		dn, df := packedBoxDist2(n[0:6], px, py, pz), packedBoxDist2(n[6:12], px, py, pz)
		near, far := math.Float32bits(n[12]), math.Float32bits(n[13])
		if df < dn {
			dn, df, near, far = df, dn, far, near
		}
		next := uint32(kernels.TreeLeaf)
		for _, c := range [2]struct {
			child uint32
			d2    float64
		}{{near, dn}, {far, df}} {
			switch {
			case c.d2 > bound:
			case c.child&kernels.TreeLeaf != 0:
				first := int(c.child&^kernels.TreeLeaf) >> 4
				for k := first; k < first+int(c.child&15); k++ {
					d := Chord2(px, py, pz, t.x[k], t.y[k], t.z[k])
					if d < best || (d == best && t.id[k] < bestID) {
						best, bestID = d, t.id[k]
						bound = fittedChordBound(best)
					}
				}
			case next == kernels.TreeLeaf:
				next = c.child
			default:
				stack[top] = pending{c.child, c.d2}
				top++
			}
		}
		for next == kernels.TreeLeaf && top > 0 {
			top--
			if stack[top].d2 <= bound {
				next = stack[top].node
			}
		}
		if next == kernels.TreeLeaf {
			return best, bestID
		}
		cur = next
	}
}

// treeStart is where a goroutine's walks over the packed tree start: the
// path from the root to the deepest node whose box held the last query's
// ball (its point and bound). Every reference of another subtree lies on or
// beyond a split plane that bounds the node's box (equal keys may fall on
// either side of a split, so on the box's face), so a ball strictly within
// the box, by treeBoxMargin, holds none of them, and the walk need not open
// the nodes above; the next observation, a neighbour in cell order, mostly
// starts at the same node.
type treeStart struct {
	path []uint32
}

// treeBoxMargin covers the outward rounding of the packed float32 boxes
// (at most a float32 ulp of a coordinate, 2^-24 below 1; four times that):
// a ball must lie this far within. About 1.5 m on the Earth, so nodes a few
// metres across never start a walk, which costs only speed.
const treeBoxMargin = 0x1p-22

// find is the node to start a walk for the ball of radius r around p.
func (s *treeStart) find(b *GpuTree, p [3]float64, r float64) uint32 {
	if len(s.path) == 0 {
		s.path = append(s.path, 0)
	}
	for len(s.path) > 1 && !ballInNode(b, s.path[len(s.path)-1], p, r) {
		s.path = s.path[:len(s.path)-1]
	}
	for {
		n := b.Nodes[16*s.path[len(s.path)-1]:][:16]
		next := uint32(kernels.TreeLeaf)
		for c := range 2 {
			child := math.Float32bits(n[12+c])
			if child&kernels.TreeLeaf == 0 && ballInBox(n[6*c:6*c+6], p, r) {
				next = child
			}
		}
		if next == kernels.TreeLeaf {
			return s.path[len(s.path)-1]
		}
		s.path = append(s.path, next)
	}
}

// ballInNode is ballInBox for node n's box, the union of its children's.
func ballInNode(b *GpuTree, n uint32, p [3]float64, r float64) bool {
	box := b.Nodes[16*n:][:12]
	var u [6]float32
	for a := range 3 {
		u[a], u[3+a] = min(box[a], box[6+a]), max(box[3+a], box[9+a])
	}
	return ballInBox(u[:], p, r)
}

// ballInBox says whether the ball of radius r around p lies within the box
// (lo x, y, z, hi x, y, z) by treeBoxMargin.
func ballInBox(box []float32, p [3]float64, r float64) bool {
	box = box[:6]
	for a := range 3 {
		if p[a]-r < float64(box[a])+treeBoxMargin || p[a]+r > float64(box[3+a])-treeBoxMargin {
			return false
		}
	}
	return true
}

// packedBoxDist2 is the squared distance from p to the box (lo x, y, z,
// hi x, y, z).
func packedBoxDist2(box []float32, px, py, pz float64) float64 {
	box = box[:6]
	dx := max(float64(box[0])-px, px-float64(box[3]), 0)
	dy := max(float64(box[1])-py, py-float64(box[4]), 0)
	dz := max(float64(box[2])-pz, pz-float64(box[5]), 0)
	return dx*dx + dy*dy + dz*dz
}
