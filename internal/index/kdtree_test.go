package index

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/geoknn/geoknn/internal/parallel"
	"github.com/geoknn/geoknn/sphere"
)

// selectNth leaves every key before nth no greater than nth's and every key
// after it no smaller, equal keys included: the split planes the walk's
// start node (treeStart) relies on.
func TestSelectNthPartitions(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for trial := range 300 {
		n := 2 + rng.IntN(200)
		pts := make([]KDPoint, n)
		for k := range pts { // few distinct keys: many ties
			pts[k] = KDPoint{C: [3]float64{float64(rng.IntN(5)), rng.Float64(), rng.Float64()}, ID: uint32(k)}
		}
		nth := rng.IntN(n)
		SelectNth(pts, nth, 0)
		for k := range n {
			if (k < nth && pts[k].C[0] > pts[nth].C[0]) || (k > nth && pts[k].C[0] < pts[nth].C[0]) {
				t.Fatalf("trial %d: key %v at %d against %v at nth %d", trial, pts[k].C[0], k, pts[nth].C[0], nth)
			}
		}
	}
}

// The tree is the same whatever the goroutines that build it (one, a team
// of any size, or buildKDTree's own under any GOMAXPROCS) and whatever
// memory it is built in: a larger tree's, left in a kdMemory.
func TestKDTreeSameOnAnyGoroutines(t *testing.T) {
	refs := PrepareRefs(spherePoints(5*KDParallelMin+7, 12))
	want := BuildKDTreeOn(refs, nil, nil)
	same := func(got *KDTree) bool {
		return slices.Equal(got.ID, want.ID) && slices.Equal(got.X, want.X) && slices.Equal(got.Y, want.Y) &&
			slices.Equal(got.Z, want.Z) && slices.Equal(got.Nodes, want.Nodes)
	}
	var mem KDMemory
	mem.Release(BuildKDTreeOn(PrepareRefs(spherePoints(7*KDParallelMin, 13)), nil, &mem))
	for _, workers := range []int{1, 2, 3, 16, 40} {
		team := parallel.NewTeam(workers)
		got := BuildKDTreeOn(refs, team, &mem)
		team.Close()
		if !same(got) {
			t.Fatalf("a team of %d: another tree", workers)
		}
		mem.Release(got)
	}
	for _, procs := range []int{1, 3, 16} {
		was := runtime.GOMAXPROCS(procs)
		got := BuildKDTree(refs)
		runtime.GOMAXPROCS(was)
		if !same(got) {
			t.Fatalf("GOMAXPROCS %d: another tree", procs)
		}
	}
}

// selectNthParallel leaves the same ordering around nth as selectNth,
// whatever the keys (spread, few and repeated, or sorted) and goroutines.
func TestSelectNthParallelPartitions(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 11))
	for trial := range 60 {
		n := KDParallelMin + rng.IntN(3*KDParallelMin)
		pts := make([]KDPoint, n)
		for k := range pts {
			key := rng.NormFloat64()
			switch trial % 3 {
			case 1:
				key = float64(rng.IntN(7))
			case 2:
				key = float64(k)
			}
			pts[k] = KDPoint{C: [3]float64{rng.Float64(), key, rng.Float64()}, ID: uint32(k)}
		}
		nth := rng.IntN(n)
		scratch := KDColumns{X: make([]float64, n), Y: make([]float64, n), Z: make([]float64, n), ID: make([]uint32, n)}
		team := parallel.NewTeam(1 + rng.IntN(16))
		SelectNthParallel(pts, scratch, nth, 1, team.Blocks)
		team.Close()
		seen := make([]bool, n)
		for k := range n {
			if seen[pts[k].ID] {
				t.Fatalf("trial %d: reference %d twice", trial, pts[k].ID)
			}
			seen[pts[k].ID] = true
			if (k < nth && pts[k].C[1] > pts[nth].C[1]) || (k > nth && pts[k].C[1] < pts[nth].C[1]) {
				t.Fatalf("trial %d: key %v at %d against %v at nth %d", trial, pts[k].C[1], k, pts[nth].C[1], nth)
			}
		}
	}
}

// spherePoints draws n points uniform on the sphere (radians).
func spherePoints(n int, seed uint64) Points {
	lat, lon := make([]float64, n), make([]float64, n)
	if err := sphere.SphereRadians(n, seed, lat, lon); err != nil {
		panic(err)
	}
	return Radians64(lat, lon)
}
