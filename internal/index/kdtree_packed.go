package index

import (
	"errors"
	"fmt"
	"math"

	"github.com/geoknn/geoknn/internal/kernels"
)

// PackedTree is a k-d tree as tree.cu walks it: each internal node as its two
// children's boxes (rounded outwards to float32, so they hold both the
// float64 references and their float32 roundings) and the two children,
// an internal node's index or a leaf (kernels.TreeLeaf | first<<4 | count);
// the references in leaf order as float4 (x, y, z, distinct index bits).
type PackedTree struct {
	Nodes []float32 // 16 a node (kernels.TreeNodeBytes)
	Refs  []float32 // 4 a reference (empty when packed for the CPU's walk)
}

// ErrTreeShape says a tree does not fit tree.cu's encoding; the caller
// plans a grid instead.
var ErrTreeShape = errors.New("k-d tree outside the GPU's bounds")

// NewPackedTree lays t out for tree.cu: its nodes (packNodes) and its
// references in leaf order.
func NewPackedTree(t *KDTree) (*PackedTree, error) {
	g, err := PackNodes(t)
	if err != nil {
		return nil, err
	}
	n := len(t.ID)
	g.Refs = make([]float32, 4*n)
	for k := range n {
		g.Refs[4*k], g.Refs[4*k+1], g.Refs[4*k+2] = float32(t.X[k]), float32(t.Y[k]), float32(t.Z[k])
		g.Refs[4*k+3] = math.Float32frombits(t.ID[k])
	}
	return g, nil
}

// PackNodes lays out t's nodes for tree.cu (and the CPU's nearestPacked,
// which reads the references from t), leaving refs empty.
func PackNodes(t *KDTree) (*PackedTree, error) {
	n := len(t.ID)
	if n <= KDLeaf || n >= 1<<27 {
		return nil, fmt.Errorf("%w: %d references (%d to 2^27)", ErrTreeShape, n, KDLeaf+1)
	}
	g := &PackedTree{}
	internal := make([]int32, len(t.Nodes)) // the GPU index of each internal CPU node
	count := int32(0)
	for k, nd := range t.Nodes {
		if nd.Left >= 0 {
			internal[k] = count
			count++
		}
	}
	g.Nodes = make([]float32, 16*int(count))
	for k, nd := range t.Nodes {
		if nd.Left < 0 {
			continue
		}
		at := g.Nodes[16*int(internal[k]):]
		outwardBox(at[0:6], &t.Nodes[nd.Left])
		outwardBox(at[6:12], &t.Nodes[nd.Right])
		at[12] = math.Float32frombits(childRef(t, internal, nd.Left))
		at[13] = math.Float32frombits(childRef(t, internal, nd.Right))
	}
	if depth := t.Depth(0); depth > kernels.TreeStack {
		return nil, fmt.Errorf("%w: depth %d (at most %d)", ErrTreeShape, depth, kernels.TreeStack)
	}
	return g, nil
}

// childRef is how a node names child c: its GPU index, or the leaf's range.
func childRef(t *KDTree, internal []int32, c int32) uint32 {
	nd := &t.Nodes[c]
	if nd.Left >= 0 {
		return uint32(internal[c])
	}
	return kernels.TreeLeaf | uint32(nd.Start)<<4 | uint32(nd.End-nd.Start)
}

// outwardBox writes the node's box as float32 (lo x, y, z, hi x, y, z),
// each bound rounded away from the box's inside.
func outwardBox(dst []float32, nd *KDNode) {
	for a := range 3 {
		dst[a] = roundDown32(nd.Lo[a])
		dst[3+a] = roundUp32(nd.Hi[a])
	}
}

func roundDown32(v float64) float32 {
	f := float32(v)
	if float64(f) > v {
		f = math.Nextafter32(f, float32(math.Inf(-1)))
	}
	return f
}

func roundUp32(v float64) float32 {
	f := float32(v)
	if float64(f) < v {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	return f
}

// Depth is the number of internal nodes on the longest path down from n.
func (t *KDTree) Depth(n int32) int {
	nd := &t.Nodes[n]
	if nd.Left < 0 {
		return 0
	}
	return 1 + max(t.Depth(nd.Left), t.Depth(nd.Right))
}

// Leaves maps each distinct reference to its leaf, as a node names it
// (kernels.TreeLeaf | first<<4 | count); id is the references' distinct
// indices in leaf order.
func (g *PackedTree) Leaves(id []uint32) []uint32 {
	of := make([]uint32, len(id))
	for k := 0; k < len(g.Nodes); k += 16 {
		for c := range 2 {
			child := math.Float32bits(g.Nodes[k+12+c])
			if child&kernels.TreeLeaf == 0 {
				continue
			}
			first := int(child&^kernels.TreeLeaf) >> 4
			for p := first; p < first+int(child&15); p++ {
				of[id[p]] = child
			}
		}
	}
	return of
}

// NearestPacked is kdTree.nearest over the tree as tree.cu lays it out (b):
// a visit reads one 64-byte node holding both children's boxes, descends
// to the nearer child and keeps the farther for later, where nearest reads
// three nodes and pushes both. Boxes are float32 rounded outwards, so their
// distances never exceed the float64 boxes' and nothing is pruned that
// nearest keeps; the leaves are ranked in float64 as nearest ranks them.
func (t *KDTree) NearestPacked(b *PackedTree, px, py, pz float64, hint uint32, from *TreeStart) (float64, uint32) {
	best, bestID := math.Inf(1), uint32(math.MaxUint32)
	if hint != 0 { // a leaf to take the first bound from
		first := int(hint&^kernels.TreeLeaf) >> 4
		for k := first; k < first+int(hint&15); k++ {
			if d := Chord2(px, py, pz, t.X[k], t.Y[k], t.Z[k]); d < best || (d == best && t.ID[k] < bestID) {
				best, bestID = d, t.ID[k]
			}
		}
	}
	bound := FittedChordBound(best)
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
					d := Chord2(px, py, pz, t.X[k], t.Y[k], t.Z[k])
					if d < best || (d == best && t.ID[k] < bestID) {
						best, bestID = d, t.ID[k]
						bound = FittedChordBound(best)
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

// TreeStart is where a goroutine's walks over the packed tree start: the
// path from the root to the deepest node whose box held the last query's
// ball (its point and bound). Every reference of another subtree lies on or
// beyond a split plane that bounds the node's box (equal keys may fall on
// either side of a split, so on the box's face), so a ball strictly within
// the box, by treeBoxMargin, holds none of them, and the walk need not open
// the nodes above; the next observation, a neighbour in cell order, mostly
// starts at the same node.
type TreeStart struct {
	path []uint32
}

// find is the node to start a walk for the ball of radius r around p.
func (s *TreeStart) find(b *PackedTree, p [3]float64, r float64) uint32 {
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
func ballInNode(b *PackedTree, n uint32, p [3]float64, r float64) bool {
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

// treeBoxMargin covers the outward rounding of the packed float32 boxes
// (at most a float32 ulp of a coordinate, 2^-24 below 1; four times that):
// a ball must lie this far within. About 1.5 m on the Earth, so nodes a few
// metres across never start a walk, which costs only speed.
const treeBoxMargin = 0x1p-22
