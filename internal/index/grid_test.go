package index

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/geoknn/geoknn/internal/parallel"
)

// BenchmarkPrepareRefs and BenchmarkPlanGrid are the host's share of a
// resident (session) query at the simulation target: 2^16 references
// prepared every query, the grid planned every 16.
func BenchmarkPrepareRefs(b *testing.B) {
	ref := spherePoints(1<<16, 1)
	var s RefSet // reused, as a session does
	for b.Loop() {
		s.Prepare(ref)
	}
}

func BenchmarkPlanGrid(b *testing.B) {
	ref := spherePoints(1<<16, 1)
	refs := PrepareRefs(ref)
	obs := spherePoints(512, 2)
	for b.Loop() {
		PlanGrid(obs, refs, GPUGridCost, 0, nil)
	}
}

// A reused refSet prepares exactly what a fresh one does, also when the
// previous set had duplicates and this one has none, or the other way.
func TestRefSetReuse(t *testing.T) {
	plain := spherePoints(3000, 1)
	withDups := Radians64(append(append([]float64(nil), plain.Lat64...), plain.Lat64[:500]...),
		append(append([]float64(nil), plain.Lon64...), plain.Lon64[:500]...))
	small := spherePoints(100, 2)
	var s RefSet
	team := parallel.NewTeam(3)
	defer team.Close()
	for _, ref := range []Points{withDups, plain, small, withDups, plain} {
		s.PrepareCPU(ref, team)
		s.Interleave(team)
		want := PrepareRefs(ref)
		if s.N != want.N || s.Dups != want.Dups || !slices.Equal(s.Orig, want.Orig) ||
			!slices.Equal(s.Xyz64, want.Xyz64) || !slices.Equal(s.Xyzw, want.Xyzw) || !slices.Equal(s.X, want.X) || s.Box != want.Box {
			t.Fatalf("reused refSet differs for %d references (n %d/%d, dups %v/%v)", ref.Len(), s.N, want.N, s.Dups, want.Dups)
		}
	}
	if s.N != 3000 || s.Dups {
		t.Errorf("n = %d, dups = %v", s.N, s.Dups)
	}
	s.Prepare(withDups)
	if s.N != 3000 || !s.Dups || len(s.Orig) != 3000 {
		t.Errorf("with duplicates: n = %d, dups = %v", s.N, s.Dups)
	}
}

// The distinct references are the first of each set of equal vectors, in
// input order, whatever the team: duplicates spread over every block of
// keepDistinct, against a map of the vectors seen.
func TestKeepDistinctAcrossBlocks(t *testing.T) {
	n := 5*DistinctBlock + 123
	base := spherePoints(n, 7)
	rng := rand.New(rand.NewPCG(8, 9))
	for i := n / 3; i < n; i += 1 + rng.IntN(4) { // a copy of an earlier point, often one of another block
		j := rng.IntN(i)
		base.Lat64[i], base.Lon64[i] = base.Lat64[j], base.Lon64[j]
	}
	for _, workers := range []int{0, 1, 3, 8} {
		var s RefSet
		var team *parallel.Team // 0 workers: none, the package's Blocks
		if workers > 0 {
			team = parallel.NewTeam(workers)
		}
		s.PrepareCPU(base, team)
		team.Close()
		seen := map[[3]float64]bool{}
		var orig []uint32
		for i := range n {
			if v := [3]float64{s.Ux[i], s.Uy[i], s.Uz[i]}; !seen[v] {
				seen[v] = true
				orig = append(orig, uint32(i))
			}
		}
		if !s.Dups || s.N != len(orig) || !slices.Equal(s.Orig, orig) {
			t.Fatalf("%d workers: %d distinct of %d (dups %v), want %d", workers, s.N, n, s.Dups, len(orig))
		}
		for k, i := range orig {
			if s.X[k] != s.Ux[i] || s.Y[k] != s.Uy[i] || s.Z[k] != s.Uz[i] {
				t.Fatalf("%d workers: distinct vector %d is not input %d's", workers, k, i)
			}
		}
	}
}

// A fitted grid lists each cell's references in index order, whatever the
// team that fills it (blocks of references counting and placing their
// own); the box its cube is fitted to, found with the references' unit
// vectors, is a scan of them.
func TestFittedGridFill(t *testing.T) {
	for _, tc := range []struct {
		name string
		ref  Points
		g    int
	}{
		{"sphere", spherePoints(40000, 3), 20},
		{"northern", northern(spherePoints(30000, 4)), 7},
		{"few", spherePoints(50, 5), 4},
		{"more cells than references", spherePoints(9000, 6), 64},
	} {
		refs := PrepareRefs(tc.ref)
		scanned := EmptyBox()
		for k := range refs.N {
			scanned.Add(refs.X[k], refs.Y[k], refs.Z[k])
		}
		if refs.Box != scanned {
			t.Errorf("%s: box found with the vectors %v, scanned %v", tc.name, refs.Box, scanned)
		}
		for _, workers := range []int{1, 3, 8} {
			team := parallel.NewTeam(workers)
			ix := BuildFittedGridOn(refs, tc.g, team)
			team.Close()
			want := make([][]uint32, tc.g*tc.g*tc.g)
			for k := range refs.N {
				c := ix.CellOf(refs.X[k], refs.Y[k], refs.Z[k])
				want[c] = append(want[c], uint32(k))
			}
			for c := range want {
				lo, hi := ix.Start[c], ix.Start[c+1]
				if got := ix.ID[lo:hi]; !slices.Equal(got, want[c]) {
					t.Fatalf("%s, %d workers: cell %d lists %v, want %v", tc.name, workers, c, got, want[c])
				}
				for p := lo; p < hi; p++ {
					if k := ix.ID[p]; ix.X[p] != refs.X[k] || ix.Y[p] != refs.Y[k] || ix.Z[p] != refs.Z[k] {
						t.Fatalf("%s, %d workers: place %d holds another vector than reference %d's", tc.name, workers, p, k)
					}
				}
			}
			if int(ix.Start[len(ix.Start)-1]) != refs.N {
				t.Fatalf("%s, %d workers: %d references listed of %d", tc.name, workers, ix.Start[len(ix.Start)-1], refs.N)
			}
		}
	}
}

// The observation sort's bands: 2^22 observations a band while the
// histogram fits one scan, wider bands where it would not.
func TestBandsFor(t *testing.T) {
	for _, tc := range []struct {
		m, g, shift, bands int
	}{
		{1, 84, 22, 1},
		{1 << 22, 84, 22, 1},
		{1<<22 + 1, 84, 22, 2},
		{1 << 24, 84, 22, 4},
		{1 << 24, 322, 23, 2},
		{1 << 27, 322, 26, 2},
		{1 << 30, 322, 29, 2},
	} {
		b := BandsFor(tc.m, NewGridShape(tc.g))
		if b.Shift != tc.shift || b.Keys != tc.bands*tc.g*tc.g*tc.g+1 {
			t.Errorf("m %d, g %d: shift %d, %d keys; want shift %d, %d bands", tc.m, tc.g, b.Shift, b.Keys, tc.shift, tc.bands)
		}
		if b.Keys > MaxScan && tc.bands > 1 {
			t.Errorf("m %d, g %d: %d keys exceed one scan", tc.m, tc.g, b.Keys)
		}
	}
}

// A slot's histogram, sized by sortHistLen for its capacity, holds the keys
// of every job up to that capacity, whatever bands the job takes.
func TestSortHistLenHoldsEveryJob(t *testing.T) {
	for _, g := range []int{4, 84, 200, 256, 281, 322} {
		shape := NewGridShape(g)
		for _, capacity := range []int{1 << 20, 1 << 22, 3 << 22, 1 << 24, 9 << 21, 1 << 26} {
			n := SortHistLen(capacity, shape)
			for m := 1; m <= capacity; m += max(1, capacity/997) {
				if k := BandsFor(m, shape).Keys; k > n {
					t.Fatalf("g %d, capacity %d: a job of %d needs %d keys, the histogram holds %d", g, capacity, m, k, n)
				}
			}
			if k := BandsFor(capacity, shape).Keys; k > n {
				t.Fatalf("g %d, capacity %d: %d keys, the histogram holds %d", g, capacity, k, n)
			}
		}
	}
}

// northern is p with every latitude made north.
func northern(p Points) Points {
	lat := slices.Clone(p.Lat64)
	for i := range lat {
		lat[i] = math.Abs(lat[i])
	}
	return Radians64(lat, p.Lon64)
}
