package cpu

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/sphere"
)

// naiveAll ranks every reference for observation i: squared chords, ties
// to the lower index; the oracle for k nearest and radius queries.
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

// rankAll is naiveAll for every observation.
func rankAll(obs, ref index.Points) [][]index.Neighbour {
	out := make([][]index.Neighbour, obs.Len())
	for i := range out {
		out[i] = naiveAll(obs, ref, i)
	}
	return out
}

// knnCases are the point sets k nearest and radius queries are checked on:
// random, clustered, edge cases and real places (at most 2,000 of each set,
// for the oracle's sake).
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
	cities, airports := realSetsE(t)
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

func TestKNearestMatchesNaive(t *testing.T) { kNearestMatchesNaive(t, NewCPU(0)) }

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

// checkKRows compares every row with the oracle: the same references in
// the same order, distances within 1 m.
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

func TestWithinMatchesNaive(t *testing.T) { withinMatchesNaive(t, NewCPU(0)) }

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

// sameOrTie reports whether the reference got stands where the oracle has
// want: it is want, or ties with it. A tie is two references whose float64
// squared chords differ by rounding only (1e-13 relative): real places at
// the same distance, which float64 sums on another engine (with CUDA's
// sine and cosine) may order the other way.
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

// sameRow reports whether a radius row holds the oracle's references in
// its order, up to ties (sameOrTie).
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

// naiveChord is the squared chord between observation i and reference j.
func naiveChord(obs, ref index.Points, i int, j uint32) float64 {
	x, y, z := index.Unit(obs.At(i))
	a, b, c := index.Unit(ref.At(int(j)))
	return index.Chord2(x, y, z, a, b, c)
}

// chordLimit decides exactly as the angle does: the limit's angle is
// within rad, the next squared chord's is not.
func TestChordLimit(t *testing.T) {
	for _, rad := range []float64{0, 1e-12, 1.5e-7, 1e-3, 0.5, 1, 2, 3, math.Pi - 1e-9} {
		d := index.ChordLimit(rad)
		if index.ChordToAngle(d) > rad || index.ChordToAngle(math.Nextafter(d, 5)) <= rad {
			t.Errorf("chordLimit(%v) = %v: angle %v, next %v", rad, d, index.ChordToAngle(d), index.ChordToAngle(math.Nextafter(d, 5)))
		}
	}
	if !math.IsInf(index.ChordLimit(math.Pi), 1) {
		t.Error("chordLimit(pi) is not +Inf")
	}
}

func TestKNearestAndWithinErrors(t *testing.T) {
	ctx, obs, ref := context.Background(), spherePoints(10, 1), spherePoints(5, 2)
	for _, k := range []int{0, 6} {
		out := engine.KResult{K: k, Index: make([]uint32, 10*max(k, 1)), Distance: make([]float32, 10*max(k, 1))}
		if _, err := NewCPU(0).KNearest(ctx, engine.Request{Obs: obs, Ref: ref}, math.Inf(1), out); err == nil {
			t.Errorf("k = %d of 5 references: no error", k)
		}
	}
	for _, rad := range []float64{-1, math.NaN(), math.Inf(1)} {
		if _, _, err := NewCPU(0).Within(ctx, engine.Request{Obs: obs, Ref: ref}, rad, false); err == nil {
			t.Errorf("radius %v: no error", rad)
		}
	}
}

// A grid side beyond the index's cells is refused, on every query kind.
func TestGridSideBound(t *testing.T) {
	req := engine.Request{Obs: spherePoints(10, 1), Ref: spherePoints(10, 2), GridSide: index.MaxGridSide + 1}
	_, err := NewCPU(0).Nearest(context.Background(), req, newResult(10))
	_, kerr := NewCPU(0).KNearest(context.Background(), req, math.Inf(1), engine.KResult{K: 1, Index: make([]uint32, 10), Distance: make([]float32, 10)})
	if err == nil || kerr == nil || !strings.Contains(err.Error(), "grid side") {
		t.Errorf("side %d: %v, %v", req.GridSide, err, kerr)
	}
}

func TestMaxGridSideFillsTheCells(t *testing.T) {
	if g := index.MaxGridSide; g*g*g > index.MaxGridCells || (g+1)*(g+1)*(g+1) <= index.MaxGridCells {
		t.Errorf("MaxGridSide %d does not match %d cells", g, index.MaxGridCells)
	}
}
