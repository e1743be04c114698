package pipeline

import (
	"slices"
	"testing"
)

func TestSampleIn(t *testing.T) {
	s := NewSample([]int{0, 5, 9, 10, 31})
	var got [][]int
	for base := 0; base < 40; base += 10 {
		got = append(got, s.In(nil, base, 10))
	}
	want := [][]int{{0, 5, 9}, {0}, nil, {1}}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Fatalf("chunk %d: %v, want %v", i, got[i], want[i])
		}
	}
}

// The reservoir keeps n distinct rows of the input, the same for the same
// seed whatever the chunks, spread over the whole input.
func TestReservoir(t *testing.T) {
	const total, n = 1_000_000, 1000
	sample := func(chunk int) []int {
		r := NewReservoir(n, 7)
		kept := make([]int, n)
		for base := 0; base < total; base += chunk {
			for _, p := range r.Take(nil, base, min(chunk, total-base)) {
				kept[p.Slot] = base + p.Row
			}
		}
		slices.Sort(kept)
		if rows := r.Rows(); !slices.Equal(rows, kept) {
			t.Fatalf("picks and Rows disagree")
		}
		return kept
	}
	a, b := sample(4096), sample(777)
	if !slices.Equal(a, b) || len(slices.Compact(slices.Clone(a))) != n {
		t.Fatalf("chunks change the sample, or rows repeat")
	}
	if late := len(a) - slices.IndexFunc(a, func(i int) bool { return i >= total/2 }); late < n/3 || late > 2*n/3 {
		t.Errorf("%d of %d rows in the input's second half", late, n)
	}
	if got := NewReservoir(n, 7).Take(nil, 0, 10); len(got) != 10 {
		t.Errorf("a chunk of 10 rows before the sample is full: %d taken", len(got))
	}
}
