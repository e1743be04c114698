package sphere

import (
	"math"
	"slices"
	"testing"
)

// Every block's slots are distinct, increasing and inside the block; the
// counts add up to exactly round(fraction * n); the draw is a function of
// (seed, step) alone.
func TestReplacementSlots(t *testing.T) {
	for _, tc := range []struct {
		n    int
		frac float64
	}{{1, 1}, {100, 0.5}, {ReplaceBlockSize, 0.01}, {3*ReplaceBlockSize + 17, 0.01}, {10*ReplaceBlockSize - 1, 0.37},
		{5 * ReplaceBlockSize, 1}, {2*ReplaceBlockSize + 5, 0}} {
		r := Replacement{Fraction: tc.frac, Seed: 3, Step: 7, Point: SphereAt}
		all := r.all(tc.n)
		if len(all) != ReplaceCount(tc.frac, tc.n) {
			t.Errorf("n %d, fraction %v: %d slots, want %d", tc.n, tc.frac, len(all), ReplaceCount(tc.frac, tc.n))
		}
		for k, i := range all {
			if int(i) >= tc.n || (k > 0 && i <= all[k-1]) {
				t.Fatalf("n %d, fraction %v: slot %d = %d after %v", tc.n, tc.frac, k, i, all[max(k-1, 0)])
			}
		}
		if again := r.all(tc.n); !slices.Equal(all, again) {
			t.Errorf("n %d: a second draw differs", tc.n)
		}
		r.Step++
		if other := r.all(tc.n); tc.frac > 0 && tc.frac < 1 && slices.Equal(all, other) {
			t.Errorf("n %d: the next step draws the same slots", tc.n)
		}
	}
}

// Over many steps every observation of a block is replaced about equally
// often.
func TestReplacementUniform(t *testing.T) {
	n, steps := ReplaceBlockSize, 2000
	hits := make([]int, n)
	for s := range steps {
		r := Replacement{Fraction: 0.05, Seed: 11, Step: uint64(s)}
		for _, i := range r.all(n) {
			hits[i]++
		}
	}
	mean := 0.05 * float64(steps)
	sd := math.Sqrt(mean * 0.95) // binomial
	for i, h := range hits {
		if math.Abs(float64(h)-mean) > 6*sd {
			t.Fatalf("observation %d replaced %d times in %d steps, expected %v ± %.1f", i, h, steps, mean, sd)
		}
	}
}

func (r Replacement) all(n int) []uint32 {
	set := make([]uint64, ReplaceBlockSize/64)
	var slots []uint32
	for b := range Blocks(n) {
		first, s := r.BlockSlots(b, n, set, nil)
		if first != len(slots) {
			panic("first ordinal out of step")
		}
		slots = append(slots, s...)
	}
	return slots
}

// CountIn counts what BlockSlots draws, for ranges whose edges cut blocks.
func TestReplacementCountIn(t *testing.T) {
	const n = 5*ReplaceBlockSize + 1234
	r := Replacement{Seed: 3, Step: 7, Fraction: 0.013}
	var all []uint32
	var set [ReplaceBlockSize / 64]uint64
	for b := range Blocks(n) {
		_, all = r.BlockSlots(b, n, set[:], all)
	}
	for _, tc := range [][2]int{{0, n}, {0, 1}, {100, 200}, {4000, 4200}, {1, n - 1}, {ReplaceBlockSize, 3 * ReplaceBlockSize},
		{n / 3, 2 * n / 3}, {2 * n / 3, n}, {n, n}, {-5, n + 5}} {
		want := 0
		for _, s := range all {
			if int(s) >= tc[0] && int(s) < tc[1] {
				want++
			}
		}
		if got := r.CountIn(n, tc[0], tc[1]); got != want {
			t.Errorf("CountIn(%d, %d, %d) = %d, want %d", n, tc[0], tc[1], got, want)
		}
	}
	if got, want := r.CountIn(n, 0, n), ReplaceCount(r.Fraction, n); got != want {
		t.Errorf("CountIn of all = %d, ReplaceCount %d", got, want)
	}
}
