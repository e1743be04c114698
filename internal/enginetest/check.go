package enginetest

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/sphere"
)

const earthRadius = sphere.EarthRadiusMetres

// NewResult is room for n answers, poisoned (indices past any reference,
// NaN distances): an engine must write every answer, as callers hand it
// memory never cleared.
func NewResult(n int) engine.Result {
	return engine.Result{Index: slices.Repeat([]uint32{math.MaxUint32 - 1}, n), Distance: slices.Repeat([]float32{float32(math.NaN())}, n)}
}

// CheckAgainstNaive fails t for any answer more than 1 m worse than the
// float64 truth or whose distance is off by more than 1 m.
func CheckAgainstNaive(t *testing.T, name string, obs, ref index.Points, out engine.Result) {
	t.Helper()
	want, wantDist := NaiveNearest(obs, ref)
	bad := 0
	for i := range want {
		if int(out.Index[i]) >= ref.Len() {
			t.Fatalf("%s: obs %d: reference %d of %d (an answer left unwritten?)", name, i, out.Index[i], ref.Len())
		}
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

// KNearestMatchesNaive checks eng's k nearest on every case, k, limit and
// algorithm against the oracle.
func KNearestMatchesNaive(t *testing.T, eng engine.Engine) {
	ctx := context.Background()
	for _, tc := range Cases(t) {
		ranked := RankAll(tc.Obs, tc.Ref)
		for _, k := range []int{1, 2, 8, 64} {
			k = min(k, tc.Ref.Len())
			for _, maxRad := range []float64{math.Inf(1), 300 / earthRadius * 1000} {
				// Side 0: the engine's own choice (the CPU's k-d tree); 7: a grid.
				for _, run := range []struct {
					algo engine.Algorithm
					side int
				}{{engine.Grid, 0}, {engine.Grid, 7}, {engine.Brute, 0}} {
					algo := run.algo
					name := fmt.Sprintf("%s/k=%d/max=%g/%v/side=%d", tc.Name, k, maxRad, algo, run.side)
					t.Run(name, func(t *testing.T) {
						n := tc.Obs.Len()
						poisoned := NewResult(n * k) // every answer must be written
						out := engine.KResult{K: k, Index: poisoned.Index, Distance: poisoned.Distance}
						req := engine.Request{Obs: tc.Obs, Ref: tc.Ref, Algorithm: algo, GridSide: run.side}
						if _, err := eng.KNearest(ctx, req, maxRad, out); err != nil {
							t.Fatal(err)
						}
						CheckKRows(t, ranked, out, maxRad)
					})
				}
			}
		}
	}
}

// CheckKRows compares every row with the oracle: the same references in
// the same order, distances within 1 m.
func CheckKRows(t *testing.T, ranked [][]index.Neighbour, out engine.KResult, maxRad float64) {
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
			if !SameOrTie(ranked[i], got, want[j]) || math.Abs(gd-index.ChordToAngle(want[j].D2))*earthRadius > 1 {
				t.Fatalf("obs %d rank %d: %d at %v, want %d at %v", i, j, got, gd, want[j].ID, index.ChordToAngle(want[j].D2))
			}
		}
	}
}

// WithinMatchesNaive checks eng's radius queries (counts, lists, both
// algorithms) against the oracle.
func WithinMatchesNaive(t *testing.T, eng engine.Engine) {
	for _, tc := range Cases(t) {
		ranked := RankAll(tc.Obs, tc.Ref)
		for _, metres := range []float64{1, 1000, 50e3, 1000e3, 20000e3} {
			for _, algo := range []engine.Algorithm{engine.Grid, engine.Brute} {
				t.Run(fmt.Sprintf("%s/%gm/%v", tc.Name, metres, algo), func(t *testing.T) {
					withinCase(t, eng, tc.Obs, tc.Ref, ranked, metres, algo)
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
		if int(res.Counts[i]) != len(want) || !SameRow(ranked[i], got, want) {
			t.Fatalf("obs %d: %d references %v, want %d %v", i, res.Counts[i], got, len(want), want)
		}
		for j, nb := range got {
			want := index.ChordToAngle(NaiveChord(obs, ref, i, nb))
			if d := float64(res.Distance[res.Offsets[i]+uint64(j)]); math.Abs(d-want)*earthRadius > 1 {
				t.Fatalf("obs %d reference %d: %v rad, want %v", i, nb, d, want)
			}
		}
	}
}
