package geoknn

import (
	"context"
	"errors"
	"fmt"

	"github.com/geoknn/geoknn/internal/engine"
)

// Session keeps a fixed set of observations resident in a Searcher's engine
// for repeated queries against references that change (a simulation's
// steps). On GPUs the observations, their unit vectors, their order by grid
// cell and the previous answers stay in device memory: a query sends only
// the references, builds the index on the device, and brings the answers
// back only when asked. Each query also counts the observations whose
// nearest reference changed since the previous one.
//
// A Session is not safe for concurrent use; close it before its Searcher.
// After an error from Replace, Nearest or Start its contents are
// unspecified: close it and open a new one.
type Session struct {
	s      *Searcher
	es     engine.Session
	closed bool
}

// NewSession places obs (radian columns, copied) in the searcher's engine.
// The grid plan (cell size, or brute force) is chosen from a fixed sample of
// the observations and re-chosen every 16 queries.
func (s *Searcher) NewSession(obs Points) (*Session, error) {
	if s.closed {
		return nil, ErrClosed
	}
	// A session stays on the engine it opens on: a StartSearcher's waits
	// for its GPUs.
	if err := s.WaitOpened(context.Background()); err != nil {
		return nil, err
	}
	opts := engine.SessionOptions{Algorithm: engine.Algorithm(s.opts.Algorithm), GridSide: s.opts.GridSide}
	es, err := s.eng.NewSession(obs.cols, opts)
	if err != nil {
		return nil, fmt.Errorf("geoknn: %w", err)
	}
	return &Session{s: s, es: es}, nil
}

// Len is the number of observations.
func (t *Session) Len() int { return t.es.Len() }

// Replace makes observation idx[k] the point pts.At(k) (radians); idx must
// be strictly increasing. Replaced observations do not count as changed at
// the next query.
func (t *Session) Replace(ctx context.Context, idx []uint32, pts Points) error {
	if err := t.ready(ctx); err != nil {
		return err
	}
	if err := t.es.Replace(ctx, idx, pts.cols); err != nil {
		return fmt.Errorf("geoknn: %w", err)
	}
	return nil
}

// Nearest answers every observation against ref. The answers land in res,
// whose Index and DistanceRad are reused when they have room for Len answers
// (allocated otherwise). With res nil the answers stay in the engine and
// only the statistics come back: the fastest way to step a simulation whose
// answers are not needed every step.
func (t *Session) Nearest(ctx context.Context, ref Points, res *Result) (SessionStats, error) {
	p, err := t.Start(ctx, ref, res)
	if err != nil {
		return SessionStats{}, err
	}
	return p.Wait()
}

// Start is Nearest in two halves, for overlapping host work with a GPU
// query: it returns once the query is under way (the references prepared
// and sent, the kernels queued), and the Pending's Wait finishes it. Wait
// must be called before anything else is done with the session or its
// Searcher, and res must not be read before it returns.
func (t *Session) Start(ctx context.Context, ref Points, res *Result) (*Pending, error) {
	if err := t.ready(ctx); err != nil {
		return nil, err
	}
	out, cols := t.resultInto(res)
	q, err := t.es.Start(ctx, ref.cols, out)
	if err != nil {
		cols.dropUnkept()
		return nil, fmt.Errorf("geoknn: %w", err)
	}
	return &Pending{q: q, res: res, cols: cols}, nil
}

// resultInto sizes res for the session's answers (answerRoom) and returns
// the engine's view of it (empty when res is nil: the answers stay in the
// engine) and the columns it made.
func (t *Session) resultInto(res *Result) (engine.Result, *newColumns) {
	if res == nil {
		return engine.Result{}, &newColumns{}
	}
	cols := answerRoom(&res.Index, &res.DistanceRad, t.es.Len())
	res.Fallback = t.s.fallback
	return engine.Result{Index: res.Index, Distance: res.DistanceRad}, cols
}

// Pending is a session query under way.
type Pending struct {
	q    engine.Pending
	res  *Result
	cols *newColumns // the result's new columns, let go if the query fails
}

// Wait blocks until the query is done and returns what Session.Nearest
// would have; later calls return the same.
func (p *Pending) Wait() (SessionStats, error) {
	st, err := p.q.Wait()
	if err != nil {
		p.cols.dropUnkept()
		return SessionStats{}, fmt.Errorf("geoknn: %w", err)
	}
	p.cols.keep()
	if p.res != nil {
		p.res.Stats = statsOf(st.Stats)
	}
	return sessionStats(st), nil
}

// Close releases the session's resources. Closing twice does nothing.
func (t *Session) Close() error {
	if t.closed {
		return nil
	}
	t.closed = true
	return t.es.Close()
}

// ready refuses a call on a closed session (or one whose Searcher is
// closed) or with a nil context.
func (t *Session) ready(ctx context.Context) error {
	if t.closed || t.s.closed {
		return ErrClosed
	}
	if ctx == nil {
		return errors.New("geoknn: nil context")
	}
	return nil
}
