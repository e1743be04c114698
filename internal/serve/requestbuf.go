package serve

import (
	"context"
	"io"
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

// requestBufs hands out request buffers, the bytes held by requests at
// once bounded by a budget (a body larger than it waits for the whole
// budget), and keeps the freed ones, at most the budget's bytes, for the
// next requests.
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

// get waits until n bytes fit the budget (or ctx's end) and returns a
// buffer of n bytes: the smallest kept one that holds them, else a new
// one (a kept one too small is dropped in its place).
func (p *requestBufs) get(ctx context.Context, n int) (*requestBuf, error) {
	w := min(int64(n), p.budget)
	if err := p.sem.Acquire(ctx, w); err != nil {
		return nil, ctxErr(ctx)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	best := -1
	for i, b := range p.free {
		if cap(b) >= n && (best < 0 || cap(b) < cap(p.free[best])) {
			best = i
		}
	}
	if best < 0 && len(p.free) > 0 {
		best = len(p.free) - 1 // dropped below, for the new one's room
	}
	var b []byte
	if best >= 0 {
		b = p.free[best]
		p.free[best] = p.free[len(p.free)-1]
		p.free = p.free[:len(p.free)-1]
		p.kept -= int64(cap(b))
	}
	if cap(b) < n {
		b = make([]byte, n)
	}
	return &requestBuf{b: b[:n], weight: w}, nil
}

// put keeps rb's memory for the next request, if the budget holds it.
func (p *requestBufs) put(rb *requestBuf) {
	p.mu.Lock()
	if c := int64(cap(rb.b)); p.kept+c <= p.budget {
		p.free = append(p.free, rb.b)
		p.kept += c
	}
	p.mu.Unlock()
	p.sem.Release(rb.weight)
	rb.b = nil
}

// readBody reads a body of the length r announces into rb's buffer,
// sized for it (never read in growing pieces).
func (rb *requestBuf) readBody(r *http.Request) ([]byte, error) {
	if _, err := io.ReadFull(r.Body, rb.b); err != nil {
		if isMaxBytes(err) || isRequestErr(err) {
			return nil, err
		}
		return nil, badRequest("body", "shorter than its Content-Length")
	}
	return rb.b, nil
}

// answer copies a nearest answer (the references' indexes, the angles in
// radians) into rb's memory, the distances in metres, on every core. The
// body it overwrites has been decoded and converted: a body of float64
// degrees (16 bytes a point) holds the answer (12); a smaller one is
// replaced by a larger buffer.
func (rb *requestBuf) answer(index []uint32, rad []float32) ([]uint32, []float64) {
	n := len(index)
	if n == 0 {
		return nil, nil
	}
	if cap(rb.b) < 12*n {
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
	return out, metres
}
