package cpu

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/enginetest"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/parallel"
)

// faceIndexOf builds the face cells of ref with side cells a face edge on
// 7 goroutines (more than most cells of a level need, whatever the
// machine), failing the test where they are refused.
func faceIndexOf(t *testing.T, ref index.Points, side int) (*faceIndex, *index.RefSet) {
	t.Helper()
	return faceIndexPooled(t, ref, side, faceTilePool)
}

// faceIndexPooled is faceIndexOf with tile pools of at most poolMost
// references (0: every cell walks the tree), gathered through the tree.
func faceIndexPooled(t *testing.T, ref index.Points, side, poolMost int) (*faceIndex, *index.RefSet) {
	t.Helper()
	return faceIndexGathered(t, ref, side, poolMost, false)
}

// faceIndexGathered is faceIndexPooled with the first level's pools
// gathered through the grid when fromGrid is set, the tree then built only
// where a cell needs it.
func faceIndexGathered(t *testing.T, ref index.Points, side, poolMost int, fromGrid bool) (*faceIndex, *index.RefSet) {
	t.Helper()
	refs := index.PrepareRefs(ref)
	var tree *index.KDTree
	if !fromGrid {
		tree = index.BuildKDTree(refs)
	}
	team := parallel.NewTeam(7) // an odd team: blocks left over at every level
	defer team.Close()
	fc, why, err := buildFaceCellsPooled(context.Background(), refs, newLazyTree(refs, tree, nil, nil), side, team, nil, poolMost, fromGrid)
	if err != nil || fc == nil {
		t.Fatalf("face cells refused: %s %v", why, err)
	}
	return fc, refs
}

// checkFaceIndex compares fc's answer for every observation with chord2
// over every reference, ties to the lowest index: the same squared chord
// and the same reference.
func checkFaceIndex(t *testing.T, fc *faceIndex, refs *index.RefSet, obs index.Points) {
	t.Helper()
	for i := range obs.Len() {
		x, y, z := index.Unit(obs.At(i))
		d, id := faceNearest(fc, x, y, z)
		want, wid := exactNearest(x, y, z, refs)
		if d != want || id != uint32(wid) {
			t.Fatalf("obs %d (%v): face cells %d at %g, brute force %d at %g (%s)", i, [3]float64{x, y, z}, id, d, wid, want, fc.note())
		}
	}
}

// faceNearest is fc's answer for unit vector (x, y, z): the squared chord
// and the distinct reference's index.
func faceNearest(fc *faceIndex, x, y, z float64) (float64, uint32) {
	first, n := fc.resolve(fc.top(x, y, z))
	if n == faceTree {
		return fc.tree.Nearest(x, y, z, nil)
	}
	d2, b, l := fc.rank(&[3]float64{x, y, z}, first, n)
	return d2, b.id[l]
}

// northern is p with every latitude made north.
func northern(p index.Points) index.Points {
	lat := slices.Clone(p.Lat64)
	for i := range lat {
		lat[i] = math.Abs(lat[i])
	}
	return index.Radians64(lat, p.Lon64)
}

// The grid gathers the first level's pools where the references spread
// over the sphere, not where they crowd into a region, whose tiles lie far
// from them; a tile far from the references is left to the tree.
func TestFaceGridFor(t *testing.T) {
	crowd := index.Radians64([]float64{0.7, 0.7001, 0.7002}, []float64{0.3, 0.3001, 0.3002})
	if g := faceGridFor(index.PrepareRefs(crowd), 62, nil); g != nil {
		t.Errorf("references within 30 m got a grid of side %d", g.G)
	}
	north := index.PrepareRefs(northern(enginetest.SpherePoints(4096, 6)))
	g := faceGridFor(north, 62, nil)
	if g == nil {
		t.Fatal("a hemisphere of references got no grid")
	}
	if !g.NearCube([3]float64{0, 0, 1}, faceGridShells/2) || g.NearCube([3]float64{0, 0, -1}, faceGridShells/2) {
		t.Error("the north pole should be near the grid's cube, the south pole not")
	}
	if _, ok := g.NearestWithin([3]float64{0, 0, 1}, faceGridShells); !ok {
		t.Error("the north pole's nearest reference is not within the shells")
	}
}

func TestFaceCellsMatchBrute(t *testing.T) {
	cities, airports := enginetest.RealSets(t)
	crowd := func(n int, spreadRad float64) index.Points {
		r := rand.New(rand.NewPCG(7, 8))
		lat, lon := make([]float64, n), make([]float64, n)
		for i := range lat {
			lat[i], lon[i] = 0.9+spreadRad*r.NormFloat64(), -2.1+spreadRad*r.NormFloat64()
		}
		return index.Radians64(lat, lon)
	}
	corners := index.Radians64([]float64{math.Pi / 2, -math.Pi / 2, 0, 0, 0, 0, math.Atan(1 / math.Sqrt2), -math.Atan(1 / math.Sqrt2)},
		[]float64{0, 0, 0, math.Pi / 2, math.Pi, -math.Pi / 4, math.Pi / 4, -3 * math.Pi / 4})
	for _, tc := range []struct {
		name string
		ref  index.Points
		side int
	}{
		{"one reference", enginetest.SpherePoints(1, 3), 4},
		{"two", enginetest.SpherePoints(2, 3), 4},
		{"five", enginetest.SpherePoints(5, 3), 1},
		{"cube corners and poles", corners, 8},
		{"sphere 4096", enginetest.SpherePoints(4096, 3), 26},
		{"sphere 4096, coarse", enginetest.SpherePoints(4096, 3), 6},
		{"airports", airports, 30},
		{"cities", cities, 40},
		{"clustered within 1,000 km", crowd(3000, 0.1), 8},
		{"northern hemisphere (grid pools, the south's tiles through the tree)", northern(enginetest.SpherePoints(4096, 6)), 40},
		{"with duplicates", index.Radians64(append(enginetest.SpherePoints(500, 4).Lat64, enginetest.SpherePoints(500, 4).Lat64[:100]...),
			append(enginetest.SpherePoints(500, 4).Lon64, enginetest.SpherePoints(500, 4).Lon64[:100]...)), 9},
	} {
		for _, pool := range []struct {
			name string
			most int
			grid bool
		}{{"tile pools", faceTilePool, false}, {"tree walks", 0, false}, {"grid pools", faceTilePool, true}} {
			t.Run(tc.name+", "+pool.name, func(t *testing.T) {
				fc, refs := faceIndexGathered(t, tc.ref, tc.side, pool.most, pool.grid)
				checkFaceIndex(t, fc, refs, enginetest.SpherePoints(min(20000, 1e8/refs.N), 11))
				checkFaceIndex(t, fc, refs, enginetest.OnFaceEdges(3000, tc.side, rand.New(rand.NewPCG(9, uint64(tc.side)))))
				checkFaceIndex(t, fc, refs, tc.ref.Slice(0, min(tc.ref.Len(), 2000)))
			})
		}
	}
}

// A tile's cells built from its pool keep the lists the tree walks give
// them: the same first-filter survivors, scanned four at a time (random
// references, where no two lie equally far from a cell's centre). In the
// northern hemisphere the grid cannot pool the south's first-level tiles,
// which wait for the tree's build; near a crowd, tiles' pools overflow and
// their cells walk the tree.
func TestFaceTilesMatchWalks(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	crowd := index.Radians64(make([]float64, 1<<14), make([]float64, 1<<14))
	for i := range crowd.Lat64 {
		crowd.Lat64[i], crowd.Lon64[i] = 0.4+0.3*rng.NormFloat64(), 2+0.3*rng.NormFloat64()
	}
	for _, tc := range []struct {
		ref  index.Points
		side int
	}{{enginetest.SpherePoints(1<<12, 5), 20}, {enginetest.SpherePoints(1<<14, 5), 31}, {enginetest.SpherePoints(1<<16, 5), 62},
		{northern(enginetest.SpherePoints(1<<14, 5)), 31}, {crowd, 31}} {
		walked, _ := faceIndexPooled(t, tc.ref, tc.side, 0)
		for _, grid := range []bool{false, true} {
			pooled, _ := faceIndexGathered(t, tc.ref, tc.side, faceTilePool, grid)
			if !slices.Equal(pooled.head, walked.head) || !slices.EqualFunc(pooled.blocks, walked.blocks,
				func(a, b faceBlock) bool { return a.orig == b.orig }) {
				t.Fatalf("%d references, side %d, pools from the grid %v: pooled %s, walked %s", tc.ref.Len(), tc.side, grid,
					pooled.note(), walked.note())
			}
		}
	}
}

// References crowded into a metre cannot be told apart by cells 4^4 times
// finer than the first level, nor can a ring of references around a pole
// by the cells at its centre: those cells have no list, the k-d tree
// answers their observations, exactly, and the note says how many.
func TestFaceCellsWithoutList(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 2000
	lat, lon := make([]float64, n), make([]float64, n)
	for i := range lat {
		lat[i], lon[i] = 0.7+1e-7*r.Float64(), 0.3+1e-7*r.Float64()
	}
	crowd := index.Radians64(lat, lon)
	var glat, glon []float64 // a 1-degree lattice up to 1 degree from the poles: rings of 360 at 89 degrees
	for la := -89; la <= 89; la++ {
		for lo := -180; lo < 180; lo += 4 {
			glat, glon = append(glat, float64(la)*math.Pi/180), append(glon, float64(lo)*math.Pi/180)
		}
	}
	for _, ref := range []index.Points{crowd, index.Radians64(glat, glon)} {
		obs := enginetest.SpherePoints(max(cellOrderMin, faceObsPerRef*ref.Len()), 5)
		out := enginetest.NewResult(obs.Len())
		st, err := NewCPU(0).Nearest(context.Background(), engine.Request{Obs: obs, Ref: ref, Algorithm: engine.Grid}, out)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(st.Note, "answered by the k-d tree") {
			t.Errorf("note %q: want cells answered by the k-d tree", st.Note)
		}
		t.Log(st.Note)
		checkAgainstBrute(t, obs, ref, out)
		fc, refs := faceIndexOf(t, ref, 16)
		checkFaceIndex(t, fc, refs, enginetest.OnFaceEdges(3000, 16, rand.New(rand.NewPCG(9, 16))))
	}
}

// checkAgainstBrute compares a nearest answer with the CPU's brute force,
// index for index and distance for distance.
func checkAgainstBrute(t *testing.T, obs, ref index.Points, got engine.Result) {
	t.Helper()
	want := enginetest.NewResult(obs.Len())
	if _, err := NewCPU(0).Nearest(context.Background(), engine.Request{Obs: obs, Ref: ref, Algorithm: engine.Brute}, want); err != nil {
		t.Fatal(err)
	}
	for i := range want.Index {
		if got.Index[i] != want.Index[i] || got.Distance[i] != want.Distance[i] {
			t.Fatalf("obs %d: %d at %g, brute force %d at %g", i, got.Index[i], got.Distance[i], want.Index[i], want.Distance[i])
		}
	}
}

// The CPU engine answers a large grid query through face cells, the same
// as brute force, for uniform and for skewed references.
func TestCPUNearestFaceCells(t *testing.T) {
	cities, _ := enginetest.RealSets(t)
	for _, ref := range []index.Points{enginetest.SpherePoints(3000, 2), cities.Slice(0, min(cities.Len(), 20000))} {
		obs := enginetest.SpherePoints(max(cellOrderMin, faceObsPerRef*ref.Len())+123, 9)
		out := enginetest.NewResult(obs.Len())
		st, err := NewCPU(0).Nearest(context.Background(), engine.Request{Obs: obs, Ref: ref, Algorithm: engine.Grid}, out)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(st.Note, "face cells ") {
			t.Fatalf("note %q: want face cells", st.Note)
		}
		t.Log(st.Note)
		checkAgainstBrute(t, obs, ref, out)
	}
}

// lanes1AVX2 and its Go twin give the same ranking, NaN padding and
// equal dot products included.
func TestLanes1Twin(t *testing.T) {
	if !index.HaveAVX2FMA {
		t.Skip("no AVX2 and FMA on this CPU: only the Go loop runs")
	}
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 2000 {
		n := 1 + trial%40
		blocks := make([]faceBlock, (n+3)/4)
		for k := range 4 * len(blocks) {
			b, l := &blocks[k/4], k%4
			if k >= n {
				b.x[l], b.y[l], b.z[l] = math.NaN(), math.NaN(), math.NaN()
				continue
			}
			b.x[l], b.y[l], b.z[l] = r.NormFloat64(), r.NormFloat64(), r.NormFloat64()
			if trial%3 == 0 && k > 0 { // equal dot products
				b.x[l], b.y[l], b.z[l] = blocks[0].x[0], blocks[0].y[0], blocks[0].z[0]
			}
		}
		o := [3]float64{r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}
		var st lanes1
		rankLanes1Go(&st, &o, blocks)
		b, r, i := st.result()
		ab, ar, ai := lanes1AVX2(&o, &blocks[0], len(blocks))
		if ab != b || ar != r || ai != i {
			t.Fatalf("trial %d (n %d): AVX2 %g %g %d, Go %g %g %d", trial, n, ab, ar, ai, b, r, i)
		}
	}
}

// namedPoints is a point set and its name in a benchmark.
type namedPoints struct {
	name string
	ref  index.Points
}

// buildBenchSets is the reference sets the index builds' benchmarks take:
// 2^16 uniform on the sphere, and the cities.
func buildBenchSets(b *testing.B) []namedPoints {
	cities, _ := enginetest.RealSets(b)
	return []namedPoints{{"sphere", enginetest.SpherePoints(1<<16, 2)}, {"cities", cities}}
}

// BenchmarkFaceBuild is the CPU's face-cell build at the side a 2^22
// observation query picks: 2^16 sphere references, and the cities.
func BenchmarkFaceBuild(b *testing.B) {
	for _, tc := range buildBenchSets(b) {
		refs := index.PrepareRefs(tc.ref)
		side := index.CellsSideFor(1<<22, refs.N, false)
		b.Run(tc.name, func(b *testing.B) {
			var fc *faceIndex
			var mem faceMemory // reused, as the engine's queries do
			var kd index.KDMemory
			for b.Loop() {
				var err error
				trees := newLazyTree(refs, nil, nil, &kd)
				team := parallel.NewTeam(0)
				fc, _, err = buildFaceCells(context.Background(), refs, trees, side, team, &mem)
				team.Close()
				if err != nil || fc == nil {
					b.Fatal("refused", err)
				}
				mem.release(fc)
				trees.release()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(fc.head)), "ns/cell")
		})
	}
}

// BenchmarkKDTreeBuild is the references' k-d tree's build on a team of
// GOMAXPROCS workers, in the last build's memory: 2^16 sphere references,
// and the cities (the face cells' build waits for it).
func BenchmarkKDTreeBuild(b *testing.B) {
	for _, tc := range buildBenchSets(b) {
		refs := index.PrepareRefs(tc.ref)
		b.Run(tc.name, func(b *testing.B) {
			team := parallel.NewTeam(0)
			defer team.Close()
			var mem index.KDMemory // reused, as the engine's queries do
			for b.Loop() {
				mem.Release(index.BuildKDTreeOn(refs, team, &mem))
			}
		})
	}
}
