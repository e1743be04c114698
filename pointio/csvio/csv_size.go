package csvio

import (
	"fmt"
	"math"
	"math/bits"
	"sync/atomic"

	"github.com/geoknn/geoknn/internal/parallel"
	"github.com/geoknn/geoknn/stream"
)

// NearestSize is the number of bytes the CSV of nearest answers
// (WriteResults, NewAnswerWriter of KindNearest) takes for the
// observations [base, base+n), read through nearest (indices from 0), with
// the header line where header says: the exact length, counted on every
// core several times faster than the lines are formatted, so that the
// ranks of an MPI job learn where each one's lines go before writing them.
// An invalid distance is the writer's error.
func NearestSize(base, n int, nearest func(i int) (ref uint32, metres float64), header bool) (int64, error) {
	var total atomic.Int64
	var firstBad atomic.Int64
	firstBad.Store(math.MaxInt64)
	parallel.Blocks(n, 1<<16, 0, func(_, lo, hi int) {
		size := int64(0)
		for i := lo; i < hi; i++ {
			ref, m := nearest(i)
			k, ok := nearestLineSize(base+i, ref, m)
			if !ok {
				lowerTo(&firstBad, int64(i))
				return
			}
			size += k
		}
		total.Add(size)
	})
	if bad := firstBad.Load(); bad != math.MaxInt64 {
		_, m := nearest(int(bad))
		return 0, fmt.Errorf("write results: observation %d: invalid distance %v m", base+int(bad), m)
	}
	if header {
		total.Add(int64(len(ResultsHeader) + 1))
	}
	return total.Load(), nil
}

// nearestLineSize is the length of appendRows's line for observation i.
func nearestLineSize(i int, ref uint32, m float64) (int64, bool) {
	if !(m >= 0) || math.IsInf(m, 1) {
		return 0, false
	}
	mm, ok := millimetres(m)
	if !ok {
		return int64(len(appendRowFloat(nil, i, ref, m))), true
	}
	return int64(decimalDigits(uint64(i)) + decimalDigits(uint64(ref)) + decimalDigits(mm/1000) + 7), true
}

// decimalDigits is the number of decimal digits of v (1 for 0).
func decimalDigits(v uint64) int {
	// log10(v) from log2(v), corrected by one comparison.
	d := (bits.Len64(v) * 1233) >> 12
	if d < len(powersOfTen) && v >= powersOfTen[d] {
		d++
	}
	return max(d, 1)
}

var powersOfTen = [...]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14,
	1e15, 1e16, 1e17, 1e18, 1e19}

// lowerTo sets a to v where v is lower.
func lowerTo(a *atomic.Int64, v int64) {
	for {
		old := a.Load()
		if v >= old || a.CompareAndSwap(old, v) {
			return
		}
	}
}

// AnswersSize is NearestSize for answers of any kind (k a row for
// KindKNearest), as NewAnswerWriter writes them: the exact bytes of a's
// lines, and of the header line where header says.
func AnswersSize(kind stream.AnswerKind, k int, a stream.Answers, header bool) (int64, error) {
	if kind == stream.KindNearest {
		return NearestSize(a.Base, a.N, a.Nearest, header)
	}
	c := &csvAnswers{kind: kind, k: k}
	var total atomic.Int64
	parallel.Blocks(a.N, 1<<12, 0, func(_, lo, hi int) {
		size := int64(0)
		for j := lo; j < hi; j++ {
			size += c.lineSize(a, j)
		}
		total.Add(size)
	})
	if header {
		total.Add(int64(len(c.header()) + 1))
	}
	return total.Load(), nil
}

// lineSize is the length of the lines of a's observation j.
func (c *csvAnswers) lineSize(a stream.Answers, j int) int64 {
	i := uint64(a.Base + j)
	switch {
	case c.kind == stream.KindWithinCounts:
		return int64(decimalDigits(i) + decimalDigits(uint64(a.Within.Count(j))) + 2)
	case c.kind == stream.KindWithinLists:
		size := int64(0)
		for r := range a.Within.Count(j) {
			ref, m := a.Within.Ref(j, r)
			size += int64(decimalDigits(i)+1) + refLineSize(ref, m)
		}
		return size
	case c.k == 1:
		ref, m, ok := a.KRow(j, 0)
		if !ok {
			return int64(decimalDigits(i) + len(",-1,\n"))
		}
		return int64(decimalDigits(i)+1) + refLineSize(ref, m)
	}
	size := int64(0)
	for r := range c.k {
		ref, m, ok := a.KRow(j, r)
		if !ok {
			break
		}
		size += int64(decimalDigits(i)+decimalDigits(uint64(r+1))+2) + refLineSize(ref, m)
	}
	return size
}

// refLineSize is the length of appendRefLine's "ref,metres\n".
func refLineSize(ref uint32, m float64) int64 {
	if mm, ok := millimetres(m); ok {
		return int64(decimalDigits(uint64(ref)) + decimalDigits(mm/1000) + 6)
	}
	return int64(len(appendRefLine(nil, ref, m)))
}
