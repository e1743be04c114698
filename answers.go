package geoknn

import (
	"github.com/geoknn/geoknn/stream"
)

// The results as the answer writers of package pointio and its format
// packages take them (stream.Answers): one adapter for every path that
// writes answers (the stream, the whole-file outputs, MPI ranks' parts),
// observations counted from 0 (set Base for a part of a larger set).

// Answers is r's nearest answers: reference and distance in metres.
func (r *Result) Answers() stream.Answers {
	return stream.Answers{N: len(r.Index), Nearest: func(i int) (uint32, float64) { return r.Index[i], r.Metres(i) }}
}

// Answers is r's rows of k answers; NoNeighbour ends a row (fewer than K
// within the distance limit).
func (r *KResult) Answers() stream.Answers {
	return stream.Answers{N: len(r.Index) / max(r.K, 1), KRow: func(i, rank int) (uint32, float64, bool) {
		e := i*r.K + rank
		if r.Index[e] == NoNeighbour {
			return 0, 0, false
		}
		return r.Index[e], r.Metres(i, rank), true
	}}
}

// Answers is r's counts, and its lists when it has them.
func (r *WithinResult) Answers() stream.Answers {
	in := stream.Within{Count: func(i int) int { return int(r.Counts[i]) }}
	if r.Offsets != nil {
		in.Ref = func(i, rank int) (uint32, float64) {
			e := int(r.Offsets[i]) + rank
			return r.Index[e], r.Metres(e)
		}
	}
	return stream.Answers{N: len(r.Counts), Within: in}
}
