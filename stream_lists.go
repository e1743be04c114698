package geoknn

import (
	"context"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/geoknn/geoknn/internal/sysmem"
	"github.com/geoknn/geoknn/stream"
)

// ListEntryBytes is what a radius list entry costs while it is found and
// held: the engine's neighbour (an index and a float64 chord, 16 bytes)
// and the answer's index and distance (8).
const ListEntryBytes = 24

// listWindowBudget is the most list entries a streamed chunk holds at
// once (tests make it small).
var listWindowBudget = listWindowEntries

// listWindowEntries is the most list entries a streamed chunk holds at
// once: a sixteenth of the memory available, between 64 MiB and 1 GiB of
// entries. A huge radius (every reference of 2^12 for each of a chunk's
// 2^20 observations: 100 GB of lists) is then answered a window of
// observations at a time as the chunk is written (#41 C4).
func listWindowEntries() int64 {
	bytes := uint64(1 << 30)
	if avail, ok := sysmem.Available(); ok {
		bytes = min(bytes, max(avail/16, 64<<20))
	}
	return int64(bytes / ListEntryBytes)
}

// withinChunk answers a radius query over a stream's chunk obs (self(j):
// observation j's own index). Lists that could exceed window entries are
// counted first; if they do, the answers' lists are found a window of
// observations at a time while the chunk is written (see listWindows),
// and lists is that window, whose error the writer must check.
func (x *Index) withinChunk(ctx context.Context, q Query, obs Points, self func(int) uint32, window int64) (a stream.Answers, es Stats, lists *listWindows, err error) {
	if !q.List || int64(obs.Len())*int64(x.Len()) <= window {
		a, es, err = x.withinWhole(ctx, q, obs, self)
		return a, es, nil, err
	}
	counts, err := x.within(ctx, obs, q.RadiusMetres, false)
	if err != nil {
		return a, es, nil, err
	}
	total := int64(0)
	for _, c := range counts.Counts {
		total += int64(c)
	}
	if total <= window {
		a, es, err = x.withinWhole(ctx, q, obs, self)
		return a, es, nil, err
	}
	w := newListWindows(ctx, x, obs, q.RadiusMetres, counts.Counts, window/int64(keptWindows()))
	if q.ExcludeSelf {
		w.self = self
		counts = counts.Without(self)
	}
	a = counts.Answers()
	a.Within.Ref = w.ref
	return a, counts.Stats, w, nil
}

// withinWhole answers a radius query over a chunk, its lists (if asked
// for) all at once.
func (x *Index) withinWhole(ctx context.Context, q Query, obs Points, self func(int) uint32) (stream.Answers, Stats, error) {
	res, err := x.within(ctx, obs, q.RadiusMetres, q.List)
	if err != nil {
		return stream.Answers{}, Stats{}, err
	}
	if q.ExcludeSelf {
		res = res.Without(self)
	}
	return res.Answers(), res.Stats, nil
}

// listWindows finds a chunk's radius lists a window of observations at a
// time, as the writer asks for them: the chunk's lists are never all
// held at once. The windows are cut up front (cuts), and the last few
// found are kept: a writer may ask from several goroutines at once (the
// CSV writer encodes blocks of observations side by side), each walking
// its own observations in order, and a window asked for again is found
// again.
type listWindows struct {
	ctx    context.Context
	x      *Index
	obs    Points
	metres float64
	self   func(int) uint32 // nil: keep each observation's own index
	cuts   []int            // window w is observations [cuts[w], cuts[w+1])

	mu   sync.Mutex
	kept atomic.Pointer[[]*listWindow] // the last windows found, newest first
	err  error                         // the first query's error (under mu)
}

// keptWindows is how many windows are held at once, each of a
// keptWindows-th of the entries a chunk may hold: one for each of the
// writer's goroutines, and one more. (Smaller windows than a few
// thousand observations would leave the engine's cores idle: it
// shares a query out in batches of 1,024.)
func keptWindows() int { return runtime.GOMAXPROCS(0) + 1 }

// listWindow is observations [lo, hi)'s lists.
type listWindow struct {
	lo, hi int
	res    *WithinResult
}

// newListWindows cuts counts's observations into windows of at most
// window entries (one observation at least).
func newListWindows(ctx context.Context, x *Index, obs Points, metres float64, counts []uint32, window int64) *listWindows {
	w := &listWindows{ctx: ctx, x: x, obs: obs, metres: metres, cuts: []int{0}}
	n := int64(0)
	for i, c := range counts {
		if n > 0 && n+int64(c) > window {
			w.cuts, n = append(w.cuts, i), 0
		}
		n += int64(c)
	}
	w.cuts = append(w.cuts, len(counts))
	w.kept.Store(&[]*listWindow{})
	return w
}

// ref is observation i's rank-th reference and its distance in metres.
// After a failed query it is 0, 0: the stream fails with the error once
// the chunk is written (failed).
func (w *listWindows) ref(i, rank int) (uint32, float64) {
	win := w.find(i)
	if win == nil {
		return 0, 0
	}
	e := int(win.res.Offsets[i-win.lo]) + rank
	return win.res.Index[e], win.res.Metres(e)
}

// find is the window of observation i, found now if it is not kept; nil
// after a failed query.
func (w *listWindows) find(i int) *listWindow {
	for _, win := range *w.kept.Load() {
		if i >= win.lo && i < win.hi {
			return win
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	kept := *w.kept.Load()
	for _, win := range kept {
		if i >= win.lo && i < win.hi {
			return win // found by another goroutine meanwhile
		}
	}
	if w.err != nil {
		return nil
	}
	k := sort.SearchInts(w.cuts, i+1) - 1
	win := &listWindow{lo: w.cuts[k], hi: w.cuts[k+1]}
	if win.res, w.err = w.load(win.lo, win.hi); w.err != nil {
		return nil
	}
	kept = append([]*listWindow{win}, kept[:min(len(kept), keptWindows()-1)]...)
	w.kept.Store(&kept)
	return win
}

// load finds observations [lo, hi)'s lists.
func (w *listWindows) load(lo, hi int) (*WithinResult, error) {
	res, err := w.x.within(w.ctx, w.obs.Slice(lo, hi), w.metres, true)
	if err != nil || w.self == nil {
		return res, err
	}
	return res.Without(func(j int) uint32 { return w.self(lo + j) }), nil
}

// failed is the error of the first query that failed, if any.
func (w *listWindows) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// StreamListBytes is the most memory Index.Stream holds at once for a
// chunk's radius lists beyond its counts, whatever the radius: what a
// caller adds to its own memory plan (and heap limit) for a list query.
func StreamListBytes() int64 { return listWindowBudget() * ListEntryBytes }
