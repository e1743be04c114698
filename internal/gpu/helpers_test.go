package gpu

// The CPU engine's test helpers (internal/cpu's cpu_test.go and
// knn_test.go), which the GPU tests compare against: a package's _test
// files cannot be imported, so these are copies.

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/sphere"
)

// spherePoints draws n points uniform on the sphere (radians); never zeros.
func spherePoints(n int, seed uint64) index.Points {
	lat, lon := make([]float64, n), make([]float64, n)
	if err := sphere.SphereRadians(n, seed, lat, lon); err != nil {
		panic(err)
	}
	return index.Radians64(lat, lon)
}

// newResult is room for n answers.
func newResult(n int) engine.Result {
	return engine.Result{Index: make([]uint32, n), Distance: make([]float32, n)}
}

const earthRadius = sphere.EarthRadiusMetres

// checkAgainstNaive fails t for any answer more than 1 m worse than the
// float64 truth or whose distance is off by more than 1 m.
func checkAgainstNaive(t *testing.T, name string, obs, ref index.Points, out engine.Result) {
	t.Helper()
	want, wantDist := naiveNearest(obs, ref)
	bad := 0
	for i := range want {
		la, lo := obs.At(i)
		lb, lob := ref.At(int(out.Index[i]))
		s1, s2 := math.Sin((lb-la)/2), math.Sin((lob-lo)/2)
		got := 2 * math.Asin(math.Sqrt(math.Min(1, s1*s1+math.Cos(la)*math.Cos(lb)*s2*s2)))
		if (got-wantDist[i])*earthRadius > 1 || math.Abs(float64(out.Distance[i])-got)*earthRadius > 1 {
			if bad < 5 {
				t.Errorf("%s: obs %d: got ref %d at %.3f m (reported %.3f m), want ref %d at %.3f m", name, i,
					out.Index[i], got*earthRadius, float64(out.Distance[i])*earthRadius, want[i], wantDist[i]*earthRadius)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d answers wrong", name, bad, len(want))
	}
}

// kNearestMatchesNaive checks eng's k nearest on every case, k, limit and
// algorithm against the oracle.
func kNearestMatchesNaive(t *testing.T, eng engine.Engine) {
	ctx := context.Background()
	for _, tc := range knnCases(t) {
		ranked := rankAll(tc.obs, tc.ref)
		for _, k := range []int{1, 2, 8, 64} {
			k = min(k, tc.ref.Len())
			for _, maxRad := range []float64{math.Inf(1), 300 / earthRadius * 1000} {
				// Side 0: the engine's own choice (the CPU's k-d tree); 7: a grid.
				for _, run := range []struct {
					algo engine.Algorithm
					side int
				}{{engine.Grid, 0}, {engine.Grid, 7}, {engine.Brute, 0}} {
					algo := run.algo
					name := fmt.Sprintf("%s/k=%d/max=%g/%v/side=%d", tc.name, k, maxRad, algo, run.side)
					t.Run(name, func(t *testing.T) {
						n := tc.obs.Len()
						out := engine.KResult{K: k, Index: make([]uint32, n*k), Distance: make([]float32, n*k)}
						req := engine.Request{Obs: tc.obs, Ref: tc.ref, Algorithm: algo, GridSide: run.side}
						if _, err := eng.KNearest(ctx, req, maxRad, out); err != nil {
							t.Fatal(err)
						}
						checkKRows(t, ranked, out, maxRad)
					})
				}
			}
		}
	}
}

// withinMatchesNaive checks eng's radius queries (counts, lists, both
// algorithms) against the oracle.
func withinMatchesNaive(t *testing.T, eng engine.Engine) {
	for _, tc := range knnCases(t) {
		ranked := rankAll(tc.obs, tc.ref)
		for _, metres := range []float64{1, 1000, 50e3, 1000e3, 20000e3} {
			for _, algo := range []engine.Algorithm{engine.Grid, engine.Brute} {
				t.Run(fmt.Sprintf("%s/%gm/%v", tc.name, metres, algo), func(t *testing.T) {
					withinCase(t, eng, tc.obs, tc.ref, ranked, metres, algo)
				})
			}
		}
	}
}

// fromVector appends the radians of the direction (x, y, z) to p.
func fromVector(p *index.Points, x, y, z float64) {
	n := math.Sqrt(x*x + y*y + z*z)
	p.Lat64 = append(p.Lat64, math.Asin(z/n))
	p.Lon64 = append(p.Lon64, math.Atan2(y, x))
}

// onFaceEdges is n points on the cube map's seams: the edges and corners
// of its faces, and the edges of the cells of side cells a face edge.
func onFaceEdges(n, side int, rng *rand.Rand) index.Points {
	var p index.Points
	for len(p.Lat64) < n {
		s := []float64{1, -1}[rng.IntN(2)]
		var u, v float64
		switch rng.IntN(3) {
		case 0: // a face edge or corner
			u, v = []float64{-1, 1}[rng.IntN(2)], []float64{-1, 1, rng.Float64()*2 - 1}[rng.IntN(3)]
		default: // a cell edge
			u, v = -1+2*float64(rng.IntN(side+1))/float64(side), rng.Float64()*2-1
		}
		c := [3]float64{s, u, v}
		a := rng.IntN(3)
		fromVector(&p, c[a], c[(a+1)%3], c[(a+2)%3])
	}
	return p
}

func rankAll(obs, ref index.Points) [][]index.Neighbour {
	out := make([][]index.Neighbour, obs.Len())
	for i := range out {
		out[i] = naiveAll(obs, ref, i)
	}
	return out
}

func knnCases(t testing.TB) []struct {
	name     string
	obs, ref index.Points
} {
	deg := math.Pi / 180
	edgeRef := index.Radians64([]float64{90 * deg, 90 * deg, -90 * deg, 0, 0, 0, 0, 45 * deg, 45 * deg},
		[]float64{0, 0, 0, 180 * deg, -180 * deg, 0, 1e-9, 10 * deg, 10 * deg})
	edgeObs := index.Radians64([]float64{90 * deg, -90 * deg, 0, 0, 45 * deg, -45 * deg},
		[]float64{17 * deg, 0, 179.9999 * deg, 0, 10 * deg, -170 * deg}) // the last: antipode of the 45, 10 pair
	clat, clon := make([]float64, 3000), make([]float64, 3000)
	if err := sphere.ClusteredRadians(3000, 5, 8, 50, clat, clon); err != nil {
		t.Fatal(err)
	}
	cities, airports := realSets(t)
	cities, airports = cities.Slice(0, min(2000, cities.Len())), airports.Slice(0, min(2000, airports.Len()))
	return []struct {
		name     string
		obs, ref index.Points
	}{
		{"sphere", spherePoints(1500, 1), spherePoints(3000, 2)},
		{"clustered references", spherePoints(1000, 3), index.Radians64(clat, clon)},
		{"poles, antimeridian, duplicates, antipodes", edgeObs, edgeRef},
		{"airports to cities", airports, cities}, {"cities to airports", cities, airports},
	}
}

func checkKRows(t *testing.T, ranked [][]index.Neighbour, out engine.KResult, maxRad float64) {
	t.Helper()
	for i, want := range ranked {
		for j := range out.K {
			got, gd := out.Index[i*out.K+j], float64(out.Distance[i*out.K+j])
			if j >= len(want) || index.ChordToAngle(want[j].D2) > maxRad {
				if got != engine.NoNeighbour || !math.IsInf(gd, 1) {
					t.Fatalf("obs %d rank %d: %d at %v, want none", i, j, got, gd)
				}
				continue
			}
			if !sameOrTie(ranked[i], got, want[j]) || math.Abs(gd-index.ChordToAngle(want[j].D2))*earthRadius > 1 {
				t.Fatalf("obs %d rank %d: %d at %v, want %d at %v", i, j, got, gd, want[j].ID, index.ChordToAngle(want[j].D2))
			}
		}
	}
}

func withinCase(t *testing.T, eng engine.Engine, obs, ref index.Points, ranked [][]index.Neighbour, metres float64, algo engine.Algorithm) {
	ctx := context.Background()
	rad := metres / earthRadius
	req := engine.Request{Obs: obs, Ref: ref, Algorithm: algo}
	counts, _, err := eng.Within(ctx, req, rad, false)
	if err != nil {
		t.Fatal(err)
	}
	res, _, err := eng.Within(ctx, req, rad, true)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(counts.Counts, res.Counts) {
		t.Fatal("counts alone differ from the listing's")
	}
	for i := range obs.Len() {
		var want []uint32
		for _, nb := range ranked[i] {
			if index.ChordToAngle(nb.D2) <= rad {
				want = append(want, nb.ID)
			}
		}
		got := res.Index[res.Offsets[i]:res.Offsets[i+1]]
		if int(res.Counts[i]) != len(want) || !sameRow(ranked[i], got, want) {
			t.Fatalf("obs %d: %d references %v, want %d %v", i, res.Counts[i], got, len(want), want)
		}
		for j, nb := range got {
			want := index.ChordToAngle(naiveChord(obs, ref, i, nb))
			if d := float64(res.Distance[res.Offsets[i]+uint64(j)]); math.Abs(d-want)*earthRadius > 1 {
				t.Fatalf("obs %d reference %d: %v rad, want %v", i, nb, d, want)
			}
		}
	}
}

func naiveNearest(obs, ref index.Points) ([]uint32, []float64) {
	idx := make([]uint32, obs.Len())
	dist := make([]float64, obs.Len())
	for i := range idx {
		la, lo := obs.At(i)
		best := math.Inf(1)
		for j := 0; j < ref.Len(); j++ {
			lb, lob := ref.At(j)
			s1, s2 := math.Sin((lb-la)/2), math.Sin((lob-lo)/2)
			h := s1*s1 + math.Cos(la)*math.Cos(lb)*s2*s2
			d := 2 * math.Asin(math.Sqrt(math.Min(1, h)))
			if d < best {
				best, idx[i] = d, uint32(j)
			}
		}
		dist[i] = best
	}
	return idx, dist
}

func sameRow(all []index.Neighbour, got, want []uint32) bool {
	if slices.Equal(got, want) {
		return true
	}
	if len(got) != len(want) {
		return false
	}
	d2 := make(map[uint32]float64, len(all))
	for _, nb := range all {
		d2[nb.ID] = nb.D2
	}
	for j := range got {
		if got[j] != want[j] && !sameOrTie(all, got[j], index.Neighbour{D2: d2[want[j]], ID: want[j]}) {
			return false
		}
	}
	g, w := slices.Clone(got), slices.Clone(want)
	slices.Sort(g)
	slices.Sort(w)
	return slices.Equal(g, w)
}

func sameOrTie(all []index.Neighbour, got uint32, want index.Neighbour) bool {
	if got == want.ID {
		return true
	}
	for _, nb := range all {
		if nb.ID == got {
			return math.Abs(nb.D2-want.D2) <= 1e-13*want.D2
		}
	}
	return false
}

func naiveChord(obs, ref index.Points, i int, j uint32) float64 {
	x, y, z := index.Unit(obs.At(i))
	a, b, c := index.Unit(ref.At(int(j)))
	return index.Chord2(x, y, z, a, b, c)
}

func naiveAll(obs, ref index.Points, i int) []index.Neighbour {
	x, y, z := index.Unit(obs.At(i))
	all := make([]index.Neighbour, ref.Len())
	for j := range all {
		a, b, c := index.Unit(ref.At(j))
		all[j] = index.Neighbour{D2: index.Chord2(x, y, z, a, b, c), ID: uint32(j)}
	}
	slices.SortFunc(all, func(a, b index.Neighbour) int {
		if a.Before(b) {
			return -1
		}
		return 1
	})
	return all
}
