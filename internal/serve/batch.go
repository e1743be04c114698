package serve

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/stream"
)

// endpoint is the path a query came to: its index in endpoints.
type endpoint uint8

const (
	atNearest endpoint = iota
	atKNearest
	atWithin
)

// query is one request's question (ask) and its points in radians.
type query struct {
	ask      geoknn.Query
	lat, lon []float64
	scalar   bool // asked with scalars: answered with scalars
}

// kind is the kind of q's answers.
func (q *query) kind() stream.AnswerKind {
	k, _ := q.ask.Kind()
	return k
}

// answer is a query's result against snap (held: release it when done).
// Nearest fills index and dist (one a point), k nearest the same with k a
// point, within counts and, for lists, offsets (from 0) with index and dist.
type answer struct {
	snap    *snapshot
	index   []uint32
	dist    []float32
	counts  []uint32
	offsets []uint64
	engine  time.Duration
}

// job is a query waiting in the batcher.
type job struct {
	q    *query
	ctx  context.Context
	done chan jobResult // buffered: the worker never waits on a gone client
}

type jobResult struct {
	a   answer
	err error
}

// batcher turns requests that arrive together into one engine call each,
// with no goroutine of its own: a request's handler queues its job, and
// if one of the engine's slots is free it becomes the batch's leader,
// answering its own job and whatever else is queued on its goroutine (a
// lone request on an idle engine is answered with no handoff at all).
// Only while another leader is running (the engine busy), and only for a
// batch that the engine sends to its devices (more than waitMin points),
// does a leader wait up to maxWait for more: a smaller batch is answered
// on the CPU's index at a cost a point that no batch lowers, so that
// waiting would only add latency; a leader that is done re-checks the
// queue after freeing its slot, so no job is left without one.
type batcher struct {
	in chan *job
	// busy counts the engine's slots taken (at most workers): taking one
	// makes a goroutine a leader, or lets a query run alone. A counter,
	// not a channel of slots: every request takes and frees one, from
	// every core, and a channel's lock is a queue of cores where an
	// atomic is one cache line's move.
	busy    atomic.Int32
	workers int
	// leaders keep a leader's memory from one batch to the next.
	leaders   sync.Pool
	store     *refStore
	maxPoints int
	maxWait   time.Duration
	waitMin   int // the fewest points a batch holds to wait for more
	m         *metrics
	stopped   atomic.Bool
	base      context.Context
	timeout   time.Duration
}

func newBatcher(base context.Context, store *refStore, workers, maxPoints int, maxWait, timeout time.Duration, m *metrics) *batcher {
	b := &batcher{in: make(chan *job, 1<<16), workers: workers, store: store,
		maxPoints: maxPoints, maxWait: maxWait, waitMin: inlinePoints + 1, m: m, base: base, timeout: timeout}
	b.leaders.New = func() any { return &leader{} }
	return b
}

// leader is a leader's memory, kept from one batch to the next.
type leader struct {
	batch, group []*job
	done         []bool
	cat          query // a group's points together
}

// jobs are kept for the next request: a job is put back by its submitter
// once its answer is read (nothing else holds it then).
var jobs = sync.Pool{New: func() any { return &job{done: make(chan jobResult, 1)} }}

// inlinePoints is the largest query the Index answers on the calling
// goroutine (geoknn's smallQuery), which no context can stop: a batch of
// at most as many points needs no timeout of its own.
const inlinePoints = 256

// close refuses new jobs; the server has drained, so none is queued.
func (b *batcher) close() { b.stopped.Store(true) }

// submit queues q and waits for its answer or ctx's end.
func (b *batcher) submit(ctx context.Context, q *query) (answer, error) {
	if b.stopped.Load() {
		return answer{}, errDraining
	}
	if a, ok, err := b.alone(ctx, q); ok {
		return a, err
	}
	j := jobs.Get().(*job)
	j.q, j.ctx = q, ctx
	select {
	case b.in <- j:
	case <-ctx.Done():
		j.q, j.ctx = nil, nil
		jobs.Put(j)
		return answer{}, ctxErr(ctx)
	}
	b.lead()
	select {
	case r := <-j.done:
		j.q, j.ctx = nil, nil
		jobs.Put(j)
		return r.a, r.err
	case <-ctx.Done():
		// A leader still answers into done (buffered), and the answer's
		// hold on its snapshot must be dropped: a goroutine waits for it.
		go func() {
			if r := <-j.done; r.err == nil {
				r.a.snap.release()
			}
		}()
		return answer{}, ctxErr(ctx)
	}
}

// alone answers a query that the engine answers on the calling
// goroutine (at most inlinePoints points) there, when nothing is queued
// and a slot is free: no job, no channel handoffs, no split of a batch's
// answer. Such a batch of one is what a leader would run (a batch on the
// CPU's index never waits for more), at a third of the channel
// operations. ok false: q is to be queued.
func (b *batcher) alone(ctx context.Context, q *query) (a answer, ok bool, err error) {
	if len(q.lat) > inlinePoints || len(b.in) > 0 {
		return answer{}, false, nil
	}
	if !b.take() {
		return answer{}, false, nil
	}
	a, err = b.runAlone(ctx, q)
	b.busy.Add(-1)
	b.lead() // jobs queued while the slot was taken
	return a, true, err
}

// runAlone answers q on its own (no timeout: the engine answers it on
// the calling goroutine, which nothing can stop).
func (b *batcher) runAlone(ctx context.Context, q *query) (answer, error) {
	if ctx.Err() != nil {
		return answer{}, ctxErr(ctx)
	}
	snap := b.store.acquire()
	if snap == nil {
		return answer{}, errDraining
	}
	b.m.batch(1, len(q.lat))
	a, err := answerOn(b.base, snap, q)
	if err != nil {
		snap.release()
		return answer{}, err
	}
	return a, nil
}

// lead answers queued jobs while a slot is free and jobs are queued.
func (b *batcher) lead() {
	for len(b.in) > 0 {
		if !b.take() {
			return // every slot is taken: its holder re-checks when done
		}
		busy := b.busy.Load() > 1 // another leader (or query) is running
		l := b.leaders.Get().(*leader)
		for {
			l.batch = b.gather(l.batch[:0], busy)
			if len(l.batch) == 0 {
				break
			}
			b.run(l)
			clear(l.batch)
		}
		b.leaders.Put(l)
		b.busy.Add(-1)
	}
}

// take takes a slot, false when every one is taken. It never takes one
// for a moment in passing (as an add undone would): a taker refused
// then does not look again, trusting the holder to re-check the queue.
func (b *batcher) take() bool {
	for {
		n := b.busy.Load()
		if int(n) >= b.workers {
			return false
		}
		if b.busy.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// gather takes queued jobs up to maxPoints; with busy, and once it holds
// waitMin points, it waits up to maxWait for more.
func (b *batcher) gather(batch []*job, busy bool) []*job {
	points := 0
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for points < b.maxPoints {
		select {
		case j := <-b.in:
			batch = append(batch, j)
			points += len(j.q.lat)
			continue
		default:
		}
		if len(batch) == 0 || !busy || b.maxWait <= 0 || points < b.waitMin {
			return batch
		}
		if timer == nil {
			timer = time.NewTimer(b.maxWait)
		}
		select {
		case j := <-b.in:
			batch = append(batch, j)
			points += len(j.q.lat)
		case <-timer.C:
			return batch
		}
	}
	return batch
}

// run answers a batch: one engine call per kind of question in it, all
// against one snapshot.
func (b *batcher) run(l *leader) {
	batch := l.batch
	snap := b.store.acquire()
	if snap == nil {
		for _, j := range batch {
			j.done <- jobResult{err: errDraining}
		}
		return
	}
	defer snap.release()
	ctx := b.base
	if points(batch) > inlinePoints {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(b.base, b.timeout)
		defer cancel()
	}
	if cap(l.done) < len(batch) {
		l.done = make([]bool, len(batch))
	}
	done := l.done[:len(batch)]
	clear(done)
	for i, j := range batch {
		if done[i] {
			continue
		}
		// The jobs asking what j asks.
		group := l.group[:0]
		k := j.q.ask // the queries one engine call answers ask alike
		for i2 := i; i2 < len(batch); i2++ {
			if !done[i2] && batch[i2].q.ask == k && batch[i2].ctx.Err() == nil {
				group = append(group, batch[i2])
				done[i2] = true
			} else if !done[i2] && batch[i2].ctx.Err() != nil {
				batch[i2].done <- jobResult{err: ctxErr(batch[i2].ctx)}
				done[i2] = true
			}
		}
		b.runGroup(ctx, snap, group, &l.cat)
		clear(group)
		l.group = group
	}
}

// points counts a batch's points.
func points(batch []*job) int {
	n := 0
	for _, j := range batch {
		n += len(j.q.lat)
	}
	return n
}

// runGroup answers jobs of one question in one engine call (their points
// gathered in cat) and splits the answer back.
func (b *batcher) runGroup(ctx context.Context, snap *snapshot, group []*job, cat *query) {
	if len(group) == 0 {
		return
	}
	q := group[0].q
	if len(group) > 1 {
		// The points together in the leader's memory: the engine reads
		// them during its call only.
		*cat = query{ask: q.ask, lat: cat.lat[:0], lon: cat.lon[:0]}
		for _, j := range group {
			cat.lat, cat.lon = append(cat.lat, j.q.lat...), append(cat.lon, j.q.lon...)
		}
		q = cat
	}
	b.m.batch(len(group), len(q.lat))
	a, err := answerOn(ctx, snap, q)
	if err != nil {
		for _, j := range group {
			j.done <- jobResult{err: err}
		}
		return
	}
	from := 0
	for _, j := range group {
		n := len(j.q.lat)
		snap.hold()
		j.done <- jobResult{a: a.slice(from, from+n, q.ask.K)}
		from += n
	}
}

// hold adds a hold on a snapshot already held.
func (s *snapshot) hold() { s.refs.Add(1) }

// slice is the answer of points [from, to) of a batch.
func (a answer) slice(from, to, k int) answer {
	out := answer{snap: a.snap, engine: a.engine}
	switch {
	case a.counts != nil:
		out.counts = a.counts[from:to]
		if a.offsets != nil {
			base := a.offsets[from]
			out.offsets = make([]uint64, to-from+1)
			for i := range out.offsets {
				out.offsets[i] = a.offsets[from+i] - base
			}
			end := a.offsets[to]
			out.index, out.dist = a.index[base:end], a.dist[base:end]
		}
	case k > 0:
		out.index, out.dist = a.index[from*k:to*k], a.dist[from*k:to*k]
	default:
		out.index, out.dist = a.index[from:to], a.dist[from:to]
	}
	return out
}

// answerOn runs q on snap's index (the caller holds snap; the answer's
// snap is set but not held).
func answerOn(ctx context.Context, snap *snapshot, q *query) (answer, error) {
	pts := geoknn.Radians64(q.lat, q.lon)
	t := time.Now()
	a := answer{snap: snap}
	var err error
	switch q.kind() {
	case stream.KindNearest:
		r := geoknn.Result{Index: answerSlice[uint32](len(q.lat)), DistanceRad: answerSlice[float32](len(q.lat))}
		if err = snap.index.NearestInto(ctx, pts, &r); err == nil {
			a.index, a.dist = r.Index, r.DistanceRad
		}
	case stream.KindKNearest:
		if err = geoknn.CheckK(q.ask.K, snap.Len()); err != nil {
			return a, fieldErr("k", err.Error())
		}
		n := len(q.lat) * q.ask.K
		r := geoknn.KResult{K: q.ask.K, Index: answerSlice[uint32](n), DistanceRad: answerSlice[float32](n)}
		if err = snap.index.KNearestInto(ctx, pts, q.ask.MaxMetres, &r); err == nil {
			a.index, a.dist = r.Index, r.DistanceRad
		}
	case stream.KindWithinCounts, stream.KindWithinLists:
		var r *geoknn.WithinResult
		if q.kind() == stream.KindWithinLists {
			r, err = snap.index.WithinList(ctx, pts, q.ask.RadiusMetres)
		} else {
			r, err = snap.index.WithinCount(ctx, pts, q.ask.RadiusMetres)
		}
		if err == nil {
			a.counts, a.offsets, a.index, a.dist = r.Counts, r.Offsets, r.Index, r.DistanceRad
		}
	}
	a.engine = time.Since(t)
	if err != nil {
		if ctx.Err() != nil {
			return a, ctxErr(ctx)
		}
		return a, fmt.Errorf("engine: %w", err)
	}
	return a, nil
}

// answerSlice is room for a batch's answers: a plain slice for a batch
// (the engine would otherwise make one with its pages touched on every
// core, goroutines started for it, worth it for millions of answers, not
// for a GPU batch's thousands), nil for a larger query, which the engine
// makes so.
func answerSlice[T uint32 | float32](n int) []T {
	if n > plainAnswers {
		return nil
	}
	return make([]T, n)
}

// plainAnswers is the most answers answerSlice makes plainly (256 KiB).
const plainAnswers = 1 << 16

// nearestInto runs nearest query q on snap's index into res (the
// caller's, reused), as answerOn does.
func nearestInto(ctx context.Context, snap *snapshot, q *query, res *geoknn.Result) (answer, error) {
	t := time.Now()
	err := snap.index.NearestInto(ctx, geoknn.Radians64(q.lat, q.lon), res)
	a := answer{snap: snap, index: res.Index, dist: res.DistanceRad, engine: time.Since(t)}
	if err != nil {
		if ctx.Err() != nil {
			return a, ctxErr(ctx)
		}
		return a, fmt.Errorf("engine: %w", err)
	}
	return a, nil
}

// ctxErr is a query's context error as the client sees it.
func ctxErr(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return errTimeout
	}
	return ctx.Err()
}
