package ranks

import (
	"path/filepath"

	"github.com/geoknn/geoknn/stream"
)

// A rank's part of a Parquet file has a length known only once encoded.
// The rank spills it (writeSpilled: written beside the output, copied in
// once every rank's length is known) where the disk has the room, and
// counts it (writeCounted: encoded once to learn its length, then again
// at its place) only where the disk would not hold the spilled parts
// beside the output. Spilling starts every rank's write at once; counting
// puts a whole encoding ahead of it. On one H100 (16 cores, two ranks of
// 8 sharing the GPU), 2^30 nearest answers to Parquet took 9.9-13.8 s
// counted against 8.4-10.7 s spilled, the writes bound by the disk and
// the page cache (docs/logs/h100-mpi-parquet-ways.log).

// spills says whether the rank spills its part of about est bytes: the
// disk holding the output must hold every rank's part and every part but
// the first's spilled copy, (2 x Size - 1) parts, all ranks' parts taken
// as this rank's size. Where the free space is unknown it spills.
func (o *Output) spills(est int64) bool {
	free, ok := o.freeBytes()
	return !ok || free >= uint64(2*int64(o.Size)-1)*uint64(est)
}

// freeBytes is the space free to the user on the output's filesystem
// (o.free where set: a test's).
func (o *Output) freeBytes() (uint64, bool) {
	if o.free != nil {
		return o.free()
	}
	return freeBytes(filepath.Dir(o.Path))
}

// parquetAnswerBytes is at least the bytes p's answers take as Parquet
// (arrowio's answer properties): an entry's distance 8 bytes (plain), its
// reference at most 4 (delta packed), its rank in a k-nearest row or a
// list 4, its observation at most 1 (delta packed, counting up); a
// count's 4 and 1; and for pages, groups and the footer a sixty-fourth
// more and a MiB. Nearest answers measured 9-10 bytes a row against 13
// here.
func parquetAnswerBytes(p Part) int64 {
	rows := int64(p.Answers.N)
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
	return b + b/64 + 1<<20
}
