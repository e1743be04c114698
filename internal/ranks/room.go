package ranks

import (
	"math"
	"path/filepath"

	"github.com/geoknn/geoknn/pointio/arrowio"
	"github.com/geoknn/geoknn/stream"
)

// A rank's part of a Parquet file has a length known only once encoded.
// The rank spills it (writeSpilled: written beside the output, copied in
// once every rank's length is known) where the disk has the room, and
// counts it (writeCounted: encoded once to learn its length, then again
// at its place) only where the disk would not hold the spilled parts
// beside the output; the ranks decide together, on every part's size.
// The writes are bound by the disk and the page cache: spilling starts
// every rank's write at once, counting puts a whole encoding ahead of it
// (BENCHMARKS.md, "MPI").

// spills says whether the ranks spill their Parquet parts, this rank's
// of about est bytes, all alike: the ranks exchange their estimates and
// the free bytes each sees on the output's filesystem, and spill where
// every rank sees room for every part and every part but the first's
// spilled copy. Unknown free space counts as room.
func (o *Output) spills(est int64) (bool, error) {
	free := int64(-1)
	if f, ok := o.freeBytes(); ok {
		free = int64(min(f, math.MaxInt64))
	}
	all, err := o.World.AllgatherInt64([]int64{est, free})
	if err != nil {
		return false, err
	}
	return roomToSpill(all), nil
}

// roomToSpill is spills' verdict from every rank's estimate and free
// bytes, in rank order, a pair a rank (-1: free bytes unknown).
func roomToSpill(estFree []int64) bool {
	var need int64
	for r := 0; r < len(estFree); r += 2 {
		need += estFree[r]
		if r > 0 {
			need += estFree[r] // its spilled copy
		}
	}
	for r := 1; r < len(estFree); r += 2 {
		if estFree[r] >= 0 && estFree[r] < need {
			return false
		}
	}
	return true
}

// freeBytes is the space free to the user on the output's filesystem
// (o.free where set: a test's).
func (o *Output) freeBytes() (uint64, bool) {
	if o.free != nil {
		return o.free()
	}
	return statFree(filepath.Dir(o.Path))
}

// parquetAnswerBytes is at least the bytes p's answers take as Parquet
// (arrowio's answer properties): an entry's distance 8 bytes (plain), its
// reference at most 4 (delta packed), its rank in a k-nearest row or a
// list 4, its observation at most 1 (delta packed, counting up); a
// count's 4 and 1; and for pages and the footer a sixty-fourth more and
// a MiB, and 256 bytes a row group (page headers and metadata, which
// sparse lists make the most of). Nearest answers measured 9-12 bytes a
// row against 13 here.
func parquetAnswerBytes(p Part) int64 {
	rows := int64(p.Answers.N)
	groups := rows/int64(arrowio.GroupRows()) + 1
	var b int64
	switch p.Kind {
	case stream.KindNearest:
		b = 13 * rows
	case stream.KindKNearest:
		b = 17 * rows * int64(max(p.K, 1))
	case stream.KindWithinCounts:
		b = 5 * rows
	default:
		b = 17 * p.Entries
	}
	return b + b/64 + 256*groups + 1<<20
}
