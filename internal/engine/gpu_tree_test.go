package engine

import (
	"errors"
	"math"
	"testing"

	"github.com/geoknn/geoknn/internal/kernels"
)

// The tree as tree.cu reads it: every reference in exactly one leaf, every
// child's box holding its references in float64 and float32, and the
// internal nodes reachable from the root.
func TestGPUTreeLayout(t *testing.T) {
	for _, n := range []int{9, 100, 4097, 1 << 15} {
		refs := prepareRefs(spherePoints(n, uint64(n)))
		kd := buildKDTree(refs)
		g, err := newGPUTree(kd)
		if err != nil {
			t.Fatal(err)
		}
		seen := make([]int, n)
		var walk func(node uint32, lo, hi [3]float32)
		walk = func(node uint32, lo, hi [3]float32) {
			at := g.nodes[16*node:]
			for c := range 2 {
				var clo, chi [3]float32
				copy(clo[:], at[6*c:6*c+3])
				copy(chi[:], at[6*c+3:6*c+6])
				ref := math.Float32bits(at[12+c])
				if ref&kernels.TreeLeaf == 0 {
					walk(ref, clo, chi)
					continue
				}
				first, count := int(ref&^kernels.TreeLeaf)>>4, int(ref&15)
				if count < 1 || count > kdLeaf {
					t.Fatalf("n %d: leaf of %d references", n, count)
				}
				for p := first; p < first+count; p++ {
					seen[p]++
					id := math.Float32bits(g.refs[4*p+3])
					v64 := [3]float64{refs.x[id], refs.y[id], refs.z[id]}
					for a := range 3 {
						v32 := g.refs[4*p+a]
						if v32 != float32(v64[a]) || v32 < clo[a] || v32 > chi[a] ||
							v64[a] < float64(clo[a]) || v64[a] > float64(chi[a]) {
							t.Fatalf("n %d: reference %d axis %d (%v) outside its leaf's box [%v, %v]", n, id, a, v64[a], clo[a], chi[a])
						}
					}
				}
			}
		}
		walk(0, [3]float32{}, [3]float32{})
		for p, k := range seen {
			if k != 1 {
				t.Fatalf("n %d: leaf position %d in %d leaves", n, p, k)
			}
		}
		if want := int(math.Ceil(math.Log2(float64(n) / kdLeaf))); g.depth < want || g.depth > want+1 {
			t.Errorf("n %d: depth %d, want about %d", n, g.depth, want)
		}
	}
	if _, err := newGPUTree(buildKDTree(prepareRefs(spherePoints(kdLeaf, 1)))); !errors.Is(err, errTreeShape) {
		t.Errorf("a tree of one leaf: %v, want errTreeShape", err)
	}
}
