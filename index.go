package geoknn

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/engines"
)

// smallQuery is the largest query an Index answers on the calling
// goroutine with its prepared grids: below it, fanning out to the engine's
// workers (and planning a grid) costs more than the query.
const smallQuery = 256

// Index is a reference set prepared once and queried many times, as a
// fitted BallTree is: its unit vectors, merged duplicates and grids are
// built by NewIndex, so that a small query costs microseconds; larger
// queries go to the engine of its Searcher (the GPUs when there are),
// which keeps the prepared references (on GPUs, on the device) between
// queries. Its calls are those of a Searcher without the references.
// An Index is safe for concurrent queries; Close releases it, and every
// call after Close returns ErrClosed.
type Index struct {
	ref      Points
	local    engine.LocalIndex // the small queries'
	prepared *engine.Prepared  // ref as the engine takes it, for large queries
	eng      *sharedEngine
	s        *Searcher // eng.s
	closed   atomic.Bool
}

// sharedEngine is a Searcher shared by an Index and the indexes made from
// it by Replaced: its mutex runs their large queries one at a time (each
// against its own prepared references), and the last Close closes it.
type sharedEngine struct {
	mu    sync.Mutex
	s     *Searcher
	holds int
}

// NewIndex prepares ref (radian columns, read in place: keep them
// unchanged while the Index is in use) on the engine opts asks for,
// preparing the references (PrepareReferences) while the engine opens.
func NewIndex(ref Points, opts Options) (*Index, error) {
	type prepared struct {
		r   *References
		err error
	}
	prep := make(chan prepared, 1)
	go func() {
		r, err := PrepareReferences(ref)
		prep <- prepared{r, err}
	}()
	s, err := NewSearcher(opts)
	p := <-prep
	if err != nil {
		return nil, err
	}
	if p.err != nil {
		s.Close()
		return nil, p.err
	}
	return s.IndexOf(p.r)
}

// NewIndex prepares ref on s's engine, as the package's NewIndex does
// (a caller that started the engine while reading its points, say). The
// Index takes s over: its queries are the Index's from then on, and the
// Index's Close closes s.
func (s *Searcher) NewIndex(ref Points) (*Index, error) {
	if s.closed {
		return nil, ErrClosed
	}
	r, err := PrepareReferences(ref)
	if err != nil {
		return nil, err
	}
	return s.IndexOf(r)
}

// Replaced prepares ref (radian columns, read in place, as NewIndex) on
// x's engine and returns it as a new Index, x unchanged: a reference set
// that changes (moving vehicles) gets a new version without opening a new
// engine (on GPUs, 0.5-1 s of driver start and every buffer again) and
// without disturbing queries on x, which may run while it is prepared and
// after. On GPUs the new references go to the device with the first large
// query against them; memory pinned through x stays pinned for the new
// index. Both indexes must be closed: the engine closes with the last.
func (x *Index) Replaced(ref Points) (*Index, error) {
	if x.closed.Load() {
		return nil, ErrClosed
	}
	local, err := engines.NewLocalIndex(ref.cols)
	if err != nil {
		return nil, fmt.Errorf("geoknn: %w", err)
	}
	x.eng.mu.Lock()
	defer x.eng.mu.Unlock()
	if x.eng.holds == 0 {
		return nil, ErrClosed
	}
	x.eng.holds++
	return &Index{ref: ref, local: local, prepared: local.Prepared(), eng: x.eng, s: x.s}, nil
}

// Len is the number of references.
func (x *Index) Len() int { return x.ref.Len() }

// small reports whether obs is answered on the calling goroutine, after
// refusing a call on a closed index or with a nil context.
func (x *Index) small(ctx context.Context, obs Points) (bool, error) {
	if x.closed.Load() {
		return false, ErrClosed
	}
	if ctx == nil {
		return false, errors.New("geoknn: nil context")
	}
	return obs.Len() <= smallQuery, nil
}

// Nearest answers, for every observation, the nearest reference.
func (x *Index) Nearest(ctx context.Context, obs Points) (*Result, error) {
	res := &Result{}
	return res, x.NearestInto(ctx, obs, res)
}

// NearestInto is Nearest into a caller-owned result, as
// Searcher.NearestInto.
func (x *Index) NearestInto(ctx context.Context, obs Points, res *Result) error {
	small, err := x.small(ctx, obs)
	if err != nil || !small {
		return x.large(err, func() error { return x.s.NearestInto(ctx, obs, x.ref, res) })
	}
	if res == nil {
		return errors.New("geoknn: nil result")
	}
	n := obs.Len()
	cols := answerRoom(&res.Index, &res.DistanceRad, n)
	defer cols.dropUnkept()
	res.Fallback, res.Stats = "", Stats{Engine: "cpu", Devices: []string{"calling goroutine"}}
	if err := x.local.Nearest(obs.cols, engine.Result{Index: res.Index, Distance: res.DistanceRad}); err != nil {
		return fmt.Errorf("geoknn: %w", err)
	}
	cols.keep()
	return nil
}

// Pin page-locks p's columns for the index's GPUs, as Searcher.Pin does:
// worth it for an observation buffer the caller fills and queries again
// and again. On the CPU engine it does nothing.
func (x *Index) Pin(p Points) (unpin func() error, err error) {
	x.eng.mu.Lock()
	defer x.eng.mu.Unlock()
	return x.s.Pin(p)
}

// PinResult page-locks r's slices for the index's GPUs, as
// Searcher.PinResult does. On the CPU engine it does nothing.
func (x *Index) PinResult(r *Result) (unpin func() error, err error) {
	x.eng.mu.Lock()
	defer x.eng.mu.Unlock()
	return x.s.PinResult(r)
}

// large runs query on the index's Searcher, one at a time, against the
// index's own references (the Searcher may be shared), unless err.
func (x *Index) large(err error, query func() error) error {
	if err != nil {
		return err
	}
	x.eng.mu.Lock()
	defer x.eng.mu.Unlock()
	if x.closed.Load() {
		return ErrClosed
	}
	x.s.prepared = x.prepared
	return query()
}

// KNearest answers the k nearest references of every observation, as
// Searcher.KNearest does.
func (x *Index) KNearest(ctx context.Context, obs Points, k int, maxMetres float64) (*KResult, error) {
	res := &KResult{K: k}
	return res, x.KNearestInto(ctx, obs, maxMetres, res)
}

// KNearestInto is KNearest into a caller-owned result (res.K is the k
// asked for), as Searcher.KNearestInto.
func (x *Index) KNearestInto(ctx context.Context, obs Points, maxMetres float64, res *KResult) error {
	small, err := x.small(ctx, obs)
	if err != nil || !small {
		return x.large(err, func() error { return x.s.KNearestInto(ctx, obs, x.ref, maxMetres, res) })
	}
	maxRad, err := checkKNearest(res, x.Len(), maxMetres)
	if err != nil {
		return err
	}
	n, k := obs.Len(), res.K
	cols := answerRoom(&res.Index, &res.DistanceRad, n*k)
	defer cols.dropUnkept()
	res.Stats = Stats{Engine: "cpu", Devices: []string{"calling goroutine"}}
	if err := x.local.KNearest(obs.cols, maxRad, engine.KResult{K: k, Index: res.Index, Distance: res.DistanceRad}); err != nil {
		return fmt.Errorf("geoknn: %w", err)
	}
	cols.keep()
	return nil
}

// WithinCount answers how many references lie within metres of every
// observation, as Searcher.WithinCount does.
func (x *Index) WithinCount(ctx context.Context, obs Points, metres float64) (*WithinResult, error) {
	return x.within(ctx, obs, metres, false)
}

// WithinList answers which references lie within metres of every
// observation, as Searcher.WithinList does.
func (x *Index) WithinList(ctx context.Context, obs Points, metres float64) (*WithinResult, error) {
	return x.within(ctx, obs, metres, true)
}

func (x *Index) within(ctx context.Context, obs Points, metres float64, list bool) (*WithinResult, error) {
	small, err := x.small(ctx, obs)
	if err != nil || !small {
		var res *WithinResult
		err := x.large(err, func() (err error) {
			res, err = x.s.within(ctx, obs, x.ref, metres, list)
			return err
		})
		return res, err
	}
	rad, err := radiusRad(metres)
	if err != nil {
		return nil, err
	}
	res, err := x.local.Within(obs.cols, rad, list)
	if err != nil {
		return nil, fmt.Errorf("geoknn: %w", err)
	}
	return withinResult(res, Stats{Engine: "cpu", Devices: []string{"calling goroutine"}}), nil
}

// Close releases the Index's engine (once every index made from it by
// Replaced is closed too). Closing twice does nothing.
func (x *Index) Close() error {
	return x.release(func() error { return x.s.Close() })
}

// release marks x closed and drops its hold on the engine, ending it with
// end when x held it last.
func (x *Index) release(end func() error) error {
	x.eng.mu.Lock()
	defer x.eng.mu.Unlock()
	if x.closed.Swap(true) {
		return nil
	}
	if x.eng.holds--; x.eng.holds > 0 {
		return nil
	}
	return end()
}

// CloseAtExit ends x as Searcher.CloseAtExit ends its searcher: for a
// process about to exit, which frees the GPUs at once.
func (x *Index) CloseAtExit() error {
	return x.release(func() error { return x.s.CloseAtExit() })
}
