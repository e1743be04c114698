package pipeline

import (
	"math"
	"math/rand/v2"
	"sort"
)

// Sample is a sorted set of rows of the whole input (knn run's
// --validate sample, drawn when the row count is known), met chunk by
// chunk in order.
type Sample struct {
	rows []int
	at   int
}

// NewSample is the sample of the sorted rows.
func NewSample(sorted []int) *Sample { return &Sample{rows: sorted} }

// In appends to dst the sample's rows in [base, base+n), as indices in
// the chunk (from 0); chunks come in order.
func (s *Sample) In(dst []int, base, n int) []int {
	for s.at < len(s.rows) && s.rows[s.at] < base {
		s.at++
	}
	for s.at < len(s.rows) && s.rows[s.at] < base+n {
		dst = append(dst, s.rows[s.at]-base)
		s.at++
	}
	return dst
}

// Reservoir draws a uniform sample of n rows from an input whose row
// count is not known before its end (CSV), reproducibly from seed, with
// Li's algorithm L: it looks at a chunk's rows only where it takes one,
// about n log(N/n) rows in all.
type Reservoir struct {
	n    int
	rows []int // the rows taken, unordered
	next int   // the next row to take
	w    float64
	rng  *rand.Rand
}

// NewReservoir starts a sample of n rows.
func NewReservoir(n int, seed uint64) *Reservoir {
	r := &Reservoir{n: n, rng: rand.New(rand.NewPCG(seed, 0x5eed))}
	if n > 0 {
		r.w = math.Exp(math.Log(r.uniform()) / float64(n))
		r.next = n + r.skip()
	}
	return r
}

// uniform is in (0, 1].
func (r *Reservoir) uniform() float64 { return 1 - r.rng.Float64() }

func (r *Reservoir) skip() int { return int(math.Floor(math.Log(r.uniform()) / math.Log(1-r.w))) }

// Pick is a row of a chunk the sample takes: its index in the chunk, and
// the slot (0 to n-1) it takes in the sample, replacing what was there.
type Pick struct{ Row, Slot int }

// Take appends to dst the rows of the chunk [base, base+n) the sample
// takes, in order; chunks come in order. A later pick of the same slot
// replaces an earlier one.
func (r *Reservoir) Take(dst []Pick, base, n int) []Pick {
	for i := base; i < base+n && len(r.rows) < r.n; i++ {
		dst = append(dst, Pick{i - base, len(r.rows)})
		r.rows = append(r.rows, i)
	}
	for r.n > 0 && r.next < base+n {
		slot := r.rng.IntN(r.n)
		dst = append(dst, Pick{r.next - base, slot})
		r.rows[slot] = r.next
		r.w *= math.Exp(math.Log(r.uniform()) / float64(r.n))
		r.next += r.skip() + 1
	}
	return dst
}

// Rows is the sample's rows, sorted.
func (r *Reservoir) Rows() []int {
	out := append([]int(nil), r.rows...)
	sort.Ints(out)
	return out
}
