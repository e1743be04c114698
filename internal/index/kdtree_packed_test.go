package index

import (
	"errors"
	"math"
	"testing"

	"github.com/geoknn/geoknn/internal/kernels"
)

// The tree as tree.cu reads it: every reference in exactly one leaf, every
// child's box holding its references in float64 and float32, and the
// internal nodes reachable from the root.
func TestPackedTreeLayout(t *testing.T) {
	for _, n := range []int{9, 100, 4097, 1 << 15} {
		refs := PrepareRefs(spherePoints(n, uint64(n)))
		kd := BuildKDTree(refs)
		g, err := NewPackedTree(kd)
		if err != nil {
			t.Fatal(err)
		}
		seen := make([]int, n)
		var walk func(node uint32, lo, hi [3]float32)
		walk = func(node uint32, lo, hi [3]float32) {
			at := g.Nodes[16*node:]
			for c := range 2 {
				var clo, chi [3]float32
				copy(clo[:], at[6*c:6*c+3])
				copy(chi[:], at[6*c+3:6*c+6])
				for a := range 3 { // a child's box lies within its parent's
					if clo[a] < lo[a] || chi[a] > hi[a] {
						t.Fatalf("n %d: node %d child %d axis %d [%v, %v] outside [%v, %v]", n, node, c, a, clo[a], chi[a], lo[a], hi[a])
					}
				}
				ref := math.Float32bits(at[12+c])
				if ref&kernels.TreeLeaf == 0 {
					walk(ref, clo, chi)
					continue
				}
				first, count := int(ref&^kernels.TreeLeaf)>>4, int(ref&15)
				if count < 1 || count > KDLeaf {
					t.Fatalf("n %d: leaf of %d references", n, count)
				}
				for p := first; p < first+count; p++ {
					seen[p]++
					id := math.Float32bits(g.Refs[4*p+3])
					v64 := [3]float64{refs.X[id], refs.Y[id], refs.Z[id]}
					for a := range 3 {
						v32 := g.Refs[4*p+a]
						if v32 != float32(v64[a]) || v32 < clo[a] || v32 > chi[a] ||
							v64[a] < float64(clo[a]) || v64[a] > float64(chi[a]) {
							t.Fatalf("n %d: reference %d axis %d (%v) outside its leaf's box [%v, %v]", n, id, a, v64[a], clo[a], chi[a])
						}
					}
				}
			}
		}
		inf := float32(math.Inf(1))
		walk(0, [3]float32{-inf, -inf, -inf}, [3]float32{inf, inf, inf})
		for p, k := range seen {
			if k != 1 {
				t.Fatalf("n %d: leaf position %d in %d leaves", n, p, k)
			}
		}
		if want := int(math.Ceil(math.Log2(float64(n) / KDLeaf))); kd.Depth(0) < want || kd.Depth(0) > want+1 {
			t.Errorf("n %d: depth %d, want about %d", n, kd.Depth(0), want)
		}
	}
	if _, err := NewPackedTree(BuildKDTree(PrepareRefs(spherePoints(KDLeaf, 1)))); !errors.Is(err, ErrTreeShape) {
		t.Errorf("a tree of one leaf: %v, want errTreeShape", err)
	}
}

// The walk over the packed layout answers as the node-by-node walk does,
// from any starting hint: references in clusters, exact duplicates' stand-
// ins and mirror-image ties included.
func TestNearestPackedMatchesNearest(t *testing.T) {
	ref := spherePoints(3000, 11)
	for i := 0; i < 200; i++ { // pairs mirrored about a point, so some observations are equidistant
		la, lo := ref.At(i)
		ref.Lat64 = append(ref.Lat64, 0.6-la)
		ref.Lon64 = append(ref.Lon64, lo)
	}
	refs := PrepareRefs(ref)
	kd := BuildKDTree(refs)
	packed, err := NewPackedTree(kd)
	if err != nil {
		t.Fatal(err)
	}
	obs := spherePoints(20000, 12)
	for i := range 200 { // on the mirror line, equidistant from reference i and its image
		_, lo := ref.At(i)
		obs.Lat64[i], obs.Lon64[i] = 0.3, lo
	}
	from := &TreeStart{} // kept from observation to observation, as a goroutine keeps it
	leafOf := packed.Leaves(kd.ID)
	for i := range obs.Len() {
		x, y, z := Unit(obs.At(i))
		wantD, wantK := kd.Nearest(x, y, z, nil)
		for _, hint := range []uint32{0, leafOf[i%refs.N], leafOf[(i*7919)%refs.N]} {
			if d, k := kd.NearestPacked(packed, x, y, z, hint, nil); d != wantD || k != wantK {
				t.Fatalf("obs %d, hint %d: packed %d at %v, node by node %d at %v", i, hint, k, d, wantK, wantD)
			}
			if d, k := kd.NearestPacked(packed, x, y, z, hint, from); d != wantD || k != wantK {
				t.Fatalf("obs %d, hint %d, from a start node: packed %d at %v, node by node %d at %v", i, hint, k, d, wantK, wantD)
			}
		}
	}
}

// References on a lattice (coordinates shared by many, so splits fall among
// equal keys) and observations on and between its points: the walk from a
// start node answers as the node-by-node walk does.
func TestNearestPackedOnALattice(t *testing.T) {
	var lat, lon []float64
	for i := range 40 {
		for j := range 40 {
			lat, lon = append(lat, 0.2+float64(i)*1e-4), append(lon, 0.3+float64(j)*1e-4)
		}
	}
	refs := PrepareRefs(Radians64(lat, lon))
	kd := BuildKDTree(refs)
	packed, err := PackNodes(kd)
	if err != nil {
		t.Fatal(err)
	}
	leafOf := packed.Leaves(kd.ID)
	from := &TreeStart{}
	hint := uint32(0)
	for i := range 60 {
		for j := range 60 {
			x, y, z := Unit(0.2+float64(i)*0.67e-4, 0.3+float64(j)*0.67e-4)
			wantD, wantK := kd.Nearest(x, y, z, nil)
			d, k := kd.NearestPacked(packed, x, y, z, hint, from)
			if d != wantD || k != wantK {
				t.Fatalf("(%d, %d): from a start node %d at %v, node by node %d at %v", i, j, k, d, wantK, wantD)
			}
			hint = leafOf[k]
		}
	}
}
