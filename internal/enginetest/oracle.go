package enginetest

import (
	"math"
	"slices"

	"github.com/geoknn/geoknn/internal/index"
)

// NaiveNearest is an independent float64 haversine brute force (lowest
// index on exact ties), the oracle for the engines' nearest answers.
func NaiveNearest(obs, ref index.Points) ([]uint32, []float64) {
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

// NaiveAll ranks every reference for observation i: squared chords, ties
// to the lower index; the oracle for k nearest and radius queries.
func NaiveAll(obs, ref index.Points, i int) []index.Neighbour {
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

// RankAll is NaiveAll for every observation.
func RankAll(obs, ref index.Points) [][]index.Neighbour {
	out := make([][]index.Neighbour, obs.Len())
	for i := range out {
		out[i] = NaiveAll(obs, ref, i)
	}
	return out
}

// NaiveChord is the squared chord between observation i and reference j.
func NaiveChord(obs, ref index.Points, i int, j uint32) float64 {
	x, y, z := index.Unit(obs.At(i))
	a, b, c := index.Unit(ref.At(int(j)))
	return index.Chord2(x, y, z, a, b, c)
}

// SameOrTie reports whether the reference got stands where the oracle has
// want: it is want, or ties with it. A tie is two references whose float64
// squared chords differ by rounding only (1e-13 relative): real places at
// the same distance, which float64 sums on another engine (with CUDA's
// sine and cosine) may order the other way.
func SameOrTie(all []index.Neighbour, got uint32, want index.Neighbour) bool {
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

// SameRow reports whether a radius row holds the oracle's references in
// its order, up to ties (SameOrTie).
func SameRow(all []index.Neighbour, got, want []uint32) bool {
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
		if got[j] != want[j] && !SameOrTie(all, got[j], index.Neighbour{D2: d2[want[j]], ID: want[j]}) {
			return false
		}
	}
	g, w := slices.Clone(got), slices.Clone(want)
	slices.Sort(g)
	slices.Sort(w)
	return slices.Equal(g, w)
}
