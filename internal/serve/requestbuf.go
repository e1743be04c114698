package serve

import (
	"context"
	"net/http"
	"sync"
	"unsafe"

	"github.com/geoknn/geoknn/internal/parallel"
	"golang.org/x/sync/semaphore"
)

// requestBuf is one bulk request's memory outside the engine: its body
// as read, then its nearest answer's columns as they are sent.
type requestBuf struct {
	b      []byte
	weight int64 // of the pool's budget
}

// requestBufs hands out request buffers, the bytes of those in use
// bounded by a budget (a body larger than it waits for the whole budget),
// and keeps the freed ones, at most the budget's bytes, for the next
// requests.
type requestBufs struct {
	budget int64
	sem    *semaphore.Weighted
	mu     sync.Mutex
	free   [][]byte
	kept   int64 // bytes in free
}

func newRequestBufs(budget int64) *requestBufs {
	return &requestBufs{budget: budget, sem: semaphore.NewWeighted(budget)}
}

// weight is what n bytes count against the budget.
func (p *requestBufs) weight(n int) int64 { return min(int64(n), p.budget) }

// get waits until n bytes fit the budget (or ctx's end) and returns a
// buffer of n bytes: the smallest kept one that holds them where the
// budget has room for all of it, else a new one.
func (p *requestBufs) get(ctx context.Context, n int) (*requestBuf, error) {
	w := p.weight(n)
	if err := p.sem.Acquire(ctx, w); err != nil {
		return nil, ctxErr(ctx)
	}
	b := p.take(n)
	if b != nil {
		if extra := p.weight(cap(b)) - w; extra > 0 && !p.sem.TryAcquire(extra) {
			p.keep(b)
			b = nil
		} else {
			w += max(extra, 0)
		}
	}
	if b == nil {
		b = make([]byte, n)
	}
	return &requestBuf{b: b[:n], weight: w}, nil
}

// take removes the smallest kept buffer of at least n bytes from the
// kept ones and returns it; nil when none holds n, after dropping one of
// those too small (the new buffer takes its room).
func (p *requestBufs) take(n int) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	best := -1
	for i, b := range p.free {
		if cap(b) >= n && (best < 0 || cap(b) < cap(p.free[best])) {
			best = i
		}
	}
	if best < 0 && len(p.free) > 0 {
		best = len(p.free) - 1
	}
	if best < 0 {
		return nil
	}
	b := p.free[best]
	p.free[best] = p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	p.kept -= int64(cap(b))
	if cap(b) < n {
		return nil
	}
	return b
}

// keep keeps b for the next requests, if the budget holds it.
func (p *requestBufs) keep(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := int64(cap(b)); p.kept+c <= p.budget {
		p.free = append(p.free, b)
		p.kept += c
	}
}

// put gives rb's memory and budget back.
func (p *requestBufs) put(rb *requestBuf) {
	p.keep(rb.b)
	p.sem.Release(rb.weight)
	rb.b = nil
}

// readBody reads a body of the length r announces into rb's buffer,
// sized for it (never read in growing pieces).
func (rb *requestBuf) readBody(r *http.Request) ([]byte, error) {
	return rb.b, readBodyInto(r, rb.b)
}

// answer copies a nearest answer (the references' indexes, the angles in
// radians) into rb's memory, the distances in metres, on every core. The
// body it overwrites has been decoded and converted: a body of float64
// degrees (16 bytes a point) holds the answer (12); a smaller one (float32
// or compressed columns) is replaced by a larger buffer, its bytes
// counted against the budget first (ctx bounds that wait).
func (p *requestBufs) answer(ctx context.Context, rb *requestBuf, index []uint32, rad []float32) ([]uint32, []float64, error) {
	n := len(index)
	if n == 0 {
		return nil, nil, nil
	}
	if cap(rb.b) < 12*n {
		if extra := p.weight(12*n) - rb.weight; extra > 0 {
			if err := p.sem.Acquire(ctx, extra); err != nil {
				return nil, nil, ctxErr(ctx)
			}
			rb.weight += extra
		}
		rb.b = make([]byte, 12*n)
	}
	// Metres first: the start of a Go allocation is aligned for them.
	metres := unsafe.Slice((*float64)(unsafe.Pointer(&rb.b[:12*n][0])), n)
	out := unsafe.Slice((*uint32)(unsafe.Pointer(&rb.b[:12*n][8*n])), n)
	parallel.Blocks(n, bulkBlock, 0, func(_, lo, hi int) {
		copy(out[lo:hi], index[lo:hi])
		for i := lo; i < hi; i++ {
			metres[i] = float64(rad[i]) * EarthRadius
		}
	})
	return out, metres, nil
}
