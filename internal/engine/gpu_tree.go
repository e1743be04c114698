package engine

import (
	"errors"
	"fmt"
	"math"

	"github.com/geoknn/geoknn/internal/kernels"
)

// gpuTree is a k-d tree as tree.cu walks it: each internal node as its two
// children's boxes (rounded outwards to float32, so they hold both the
// float64 references and their float32 roundings) and the two children,
// an internal node's index or a leaf (kernels.TreeLeaf | first<<4 | count);
// the references in leaf order as float4 (x, y, z, distinct index bits).
type GpuTree struct {
	Nodes []float32 // 16 a node (kernels.TreeNodeBytes)
	Refs  []float32 // 4 a reference (empty when packed for the CPU's walk)
}

// errTreeShape says a tree does not fit tree.cu's encoding; the caller
// plans a grid instead.
var errTreeShape = errors.New("k-d tree outside the GPU's bounds")

// newGPUTree lays t out for tree.cu: its nodes (packNodes) and its
// references in leaf order.
func NewGPUTree(t *kdTree) (*GpuTree, error) {
	g, err := packNodes(t)
	if err != nil {
		return nil, err
	}
	n := len(t.id)
	g.Refs = make([]float32, 4*n)
	for k := range n {
		g.Refs[4*k], g.Refs[4*k+1], g.Refs[4*k+2] = float32(t.x[k]), float32(t.y[k]), float32(t.z[k])
		g.Refs[4*k+3] = math.Float32frombits(t.id[k])
	}
	return g, nil
}

// packNodes lays out t's nodes for tree.cu (and the CPU's nearestPacked,
// which reads the references from t), leaving refs empty.
func packNodes(t *kdTree) (*GpuTree, error) {
	n := len(t.id)
	if n <= kdLeaf || n >= 1<<27 {
		return nil, fmt.Errorf("%w: %d references (%d to 2^27)", errTreeShape, n, kdLeaf+1)
	}
	g := &GpuTree{}
	internal := make([]int32, len(t.nodes)) // the GPU index of each internal CPU node
	count := int32(0)
	for k, nd := range t.nodes {
		if nd.left >= 0 {
			internal[k] = count
			count++
		}
	}
	g.Nodes = make([]float32, 16*int(count))
	for k, nd := range t.nodes {
		if nd.left < 0 {
			continue
		}
		at := g.Nodes[16*int(internal[k]):]
		outwardBox(at[0:6], &t.nodes[nd.left])
		outwardBox(at[6:12], &t.nodes[nd.right])
		at[12] = math.Float32frombits(childRef(t, internal, nd.left))
		at[13] = math.Float32frombits(childRef(t, internal, nd.right))
	}
	if depth := t.depth(0); depth > kernels.TreeStack {
		return nil, fmt.Errorf("%w: depth %d (at most %d)", errTreeShape, depth, kernels.TreeStack)
	}
	return g, nil
}

// childRef is how a node names child c: its GPU index, or the leaf's range.
func childRef(t *kdTree, internal []int32, c int32) uint32 {
	nd := &t.nodes[c]
	if nd.left >= 0 {
		return uint32(internal[c])
	}
	return kernels.TreeLeaf | uint32(nd.start)<<4 | uint32(nd.end-nd.start)
}

// outwardBox writes the node's box as float32 (lo x, y, z, hi x, y, z),
// each bound rounded away from the box's inside.
func outwardBox(dst []float32, nd *kdNode) {
	for a := range 3 {
		dst[a] = roundDown32(nd.lo[a])
		dst[3+a] = roundUp32(nd.hi[a])
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

// depth is the number of internal nodes on the longest path down from n.
func (t *kdTree) depth(n int32) int {
	nd := &t.nodes[n]
	if nd.left < 0 {
		return 0
	}
	return 1 + max(t.depth(nd.left), t.depth(nd.right))
}

// leaves maps each distinct reference to its leaf, as a node names it
// (kernels.TreeLeaf | first<<4 | count); id is the references' distinct
// indices in leaf order.
func (g *GpuTree) leaves(id []uint32) []uint32 {
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
