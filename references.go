package geoknn

import (
	"errors"
	"fmt"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/engines"
)

// References is a reference set prepared for an Index: the unit vectors,
// exact duplicates merged, and the CPU's k-d trees and grid. It is the
// part of NewIndex that is the same on every engine, so that a caller can
// prepare it while NewSearcher waits for the GPUs (0.5-1 s on the hosts
// measured; 62 ms to prepare the 135,233 GeoNames cities on one H200
// host's 16 cores),
// and give it to Searcher.IndexOf once the engine is open. It is
// read-only and may back any number of indexes.
type References struct {
	ref      Points
	local    engine.LocalIndex
	prepared *engine.Prepared // local's, once: kept plans and face cells are known by it
}

// PrepareReferences prepares ref (radian columns, read in place: keep
// them unchanged while the References or an Index of them is in use).
func PrepareReferences(ref Points) (*References, error) {
	local, err := engines.NewLocalIndex(ref.cols)
	if err != nil {
		return nil, fmt.Errorf("geoknn: %w", err)
	}
	return &References{ref: ref, local: local, prepared: local.Prepared()}, nil
}

// Len is the number of references.
func (r *References) Len() int { return r.ref.Len() }

// PlanFor plans the GPUs' grid query of observations like obs (an evenly
// spaced sample of a few thousand of them is walked) against r, as the
// first large nearest query on GPUs would plan it, and keeps the plan
// with r, where that query finds it and only checks it against its own
// observations. It is host work (70-100 ms for the 135,233 cities on one
// H200 host) for a caller that holds observations while the GPUs open; it
// does nothing for an opts.Algorithm other than Grid. The answers are the
// same with or without it; only the query's wait changes.
func (r *References) PlanFor(obs Points, opts Options) {
	if obs.Len() > 0 {
		engines.PlanAhead(requestFor(sampleOf(obs, planAheadSample), r.ref, opts, r.prepared))
	}
}

// IndexOf is an Index of r on s's engine, as s.NewIndex(ref) would make
// it without preparing ref again. The Index takes s over: its queries
// are the Index's from then on, and the Index's Close closes s; a second
// IndexOf or NewIndex on s is refused.
func (s *Searcher) IndexOf(r *References) (*Index, error) {
	switch {
	case s.closed:
		return nil, ErrClosed
	case r == nil:
		return nil, errors.New("geoknn: IndexOf of nil references")
	case s.indexed:
		// Two indexes would each run queries on s under a lock of their
		// own; Replaced makes more indexes on one engine.
		return nil, errors.New("geoknn: the searcher backs an Index already (Index.Replaced makes another)")
	}
	s.indexed = true
	// Large queries reuse the prepared references; on GPUs they stay on
	// the device from one query to the next.
	x := &Index{ref: r.ref, local: r.local, prepared: r.prepared, eng: &sharedEngine{s: s, holds: 1}, s: s}
	s.prepared = x.prepared
	return x, nil
}
