package csvio

import (
	"bufio"
	"fmt"
	"strconv"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/stream"
)

// KResultsHeader is the header line WriteKResults writes.
const KResultsHeader = "obs_index,rank,ref_index,distance_m"

// WriteKResults writes the k nearest references of n observations as CSV:
// ResultsHeader's columns with the rank (1 to k) after the observation,
// one line per answer found, nearest first, distances in metres with three
// decimals as WriteResults writes them. With k = 1 the lines are
// WriteResults's, and an observation with no reference within the limit
// gets "i,-1," (no distance). row is called from several goroutines at
// once.
func WriteKResults(w *bufio.Writer, n, k int, row stream.KRow) error {
	if k == 1 {
		return writeNearestOrNone(w, n, row)
	}
	return writeLines(w, KResultsHeader, n, 1<<14, func(dst []byte, i int) []byte { return appendKLines(dst, i, k, row) })
}

// appendKLines appends observation i's lines of WriteKResults (k > 1).
func appendKLines(dst []byte, i, k int, row stream.KRow) []byte {
	for r := range k {
		ref, m, ok := row(i, r)
		if !ok {
			break
		}
		dst = strconv.AppendInt(dst, int64(i), 10)
		dst = append(dst, ',')
		dst = strconv.AppendInt(dst, int64(r+1), 10)
		dst = appendRefLine(append(dst, ','), ref, m)
	}
	return dst
}

// writeNearestOrNone is WriteResults's form for k = 1, with "i,-1," where
// no reference lies within the limit.
func writeNearestOrNone(w *bufio.Writer, n int, row stream.KRow) error {
	return writeLines(w, ResultsHeader, n, 1<<16, func(dst []byte, i int) []byte { return appendNearestOrNone(dst, i, row) })
}

// appendNearestOrNone appends observation i's line of WriteKResults with
// k = 1.
func appendNearestOrNone(dst []byte, i int, row stream.KRow) []byte {
	dst = strconv.AppendInt(dst, int64(i), 10)
	ref, m, ok := row(i, 0)
	if !ok {
		return append(dst, ",-1,\n"...)
	}
	return appendRefLine(append(dst, ','), ref, m)
}

// appendRefLine appends "ref,metres\n".
func appendRefLine(dst []byte, ref uint32, m float64) []byte {
	dst = strconv.AppendUint(dst, uint64(ref), 10)
	dst = append(dst, ',')
	return append(appendMetres(dst, m), '\n')
}

// writeLines writes header, then the lines item appends for each of n
// items, formatted block items at a time on every core, and flushes.
func writeLines(w *bufio.Writer, header string, n, block int, item func(dst []byte, i int) []byte) error {
	if _, err := w.WriteString(header + "\n"); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	err := pointio.WriteBlocks(w, n, block, func(dst []byte, lo, hi int) ([]byte, error) {
		for i := lo; i < hi; i++ {
			dst = item(dst, i)
		}
		return dst, nil
	})
	if err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return w.Flush()
}

// WriteWithinCounts writes "obs_index,count" for n observations.
func WriteWithinCounts(w *bufio.Writer, n int, in stream.Within) error {
	return writeLines(w, withinCountsHeader, n, 1<<16, func(dst []byte, i int) []byte { return appendCountLine(dst, i, in.Count(i)) })
}

// withinCountsHeader is the header line WriteWithinCounts writes.
const withinCountsHeader = "obs_index,count"

// appendCountLine appends WriteWithinCounts's line "i,count".
func appendCountLine(dst []byte, i, count int) []byte {
	dst = strconv.AppendInt(dst, int64(i), 10)
	dst = append(dst, ',')
	dst = strconv.AppendInt(dst, int64(count), 10)
	return append(dst, '\n')
}

// WriteWithinLists writes ResultsHeader's columns, one line per reference
// within the radius of each observation, nearest first.
func WriteWithinLists(w *bufio.Writer, n int, in stream.Within) error {
	return writeLines(w, ResultsHeader, n, 1<<12, func(dst []byte, i int) []byte { return appendListLines(dst, i, i, in) })
}

// appendListLines appends WriteWithinLists's lines of the observation
// numbered i, whose answers in are at j.
func appendListLines(dst []byte, i, j int, in stream.Within) []byte {
	n := in.Count(j)
	if n == 0 && in.KeepUnmatched {
		dst = strconv.AppendInt(dst, int64(i), 10)
		return append(dst, ",-1,\n"...)
	}
	for r := range n {
		ref, m := in.Ref(j, r)
		dst = strconv.AppendInt(dst, int64(i), 10)
		dst = appendRefLine(append(dst, ','), ref, m)
	}
	return dst
}
