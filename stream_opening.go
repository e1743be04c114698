package geoknn

import (
	"context"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/engines"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/parallel"
	"github.com/geoknn/geoknn/stream"
)

// openingSplitter hands a stream's chunks out a CPU block at a time while
// the GPUs of a StartSearcher open, so that each block's answers are
// written as soon as the CPU has them rather than with the whole chunk (a
// chunk sized for GPUs holds about eight CPU blocks); once the GPUs have
// opened, the rest of the chunk goes out in one piece, the chunk's memory
// with it, and later chunks pass through whole. Blocks are copied out of
// the chunk the splitter holds, never handed out as views of it while it
// holds the chunk: the stream gives every chunk back to the reader as a
// later read's buffer.
type openingSplitter struct {
	stream.ChunkReader
	opening *opening
	block   int
	held    stream.Chunk // the chunk being handed out, and the reads' buffer
	at      int          // rows of held handed out
	// first, when set, is called with the first chunk read while the GPUs
	// open (planFirst).
	first func(stream.Chunk)
}

// Next is the next block of the held chunk, or of a chunk read now while
// the GPUs are still opening, or the reader's next chunk.
func (p *openingSplitter) Next(ctx context.Context, dst stream.Chunk) (stream.Chunk, error) {
	if p.at < p.held.Len() {
		return p.cut(dst), nil
	}
	if p.opening.ended() {
		p.held = stream.Chunk{} // its memory goes: chunks pass through from now on
		return p.ChunkReader.Next(ctx, dst)
	}
	c, err := p.ChunkReader.Next(ctx, p.held)
	if err != nil {
		return c, err
	}
	if p.first != nil {
		p.first(c)
		p.first = nil
	}
	p.held, p.at = c, 0
	return p.cut(dst), nil
}

// cut copies into dst's columns the next block of the held chunk, or
// hands out all the rest of it once the GPUs have opened.
func (p *openingSplitter) cut(dst stream.Chunk) stream.Chunk {
	if p.opening.ended() {
		return p.handOver()
	}
	lo, hi := p.at, min(p.held.Len(), p.at+p.block)
	p.at = hi
	dst.Base = p.held.Base + int64(lo)
	dst.Lat, dst.Lon = parallel.Grown(dst.Lat, hi-lo, hi-lo), parallel.Grown(dst.Lon, hi-lo, hi-lo)
	index.ParallelCopy(dst.Lat, p.held.Lat[lo:hi])
	index.ParallelCopy(dst.Lon, p.held.Lon[lo:hi])
	if p.held.IDs == nil {
		dst.IDs = nil
	} else {
		dst.IDs = append(dst.IDs[:0], p.held.IDs[lo:hi]...)
	}
	return dst
}

// handOver hands out the rest of the held chunk as it is, and with it
// the chunk's memory, which the stream gives back to the reader as it
// would a chunk read whole; the splitter holds nothing from then on.
// Copied, the rest would need new columns made and filled (a GPU-sized
// chunk: up to 128 MiB) just as the GPUs take their first chunk; handed
// over, it costs the reader new columns later when it began past row 0
// (the view has that much less room), off the GPUs' first chunk.
func (p *openingSplitter) handOver() stream.Chunk {
	h, lo := p.held, p.at
	p.held, p.at = stream.Chunk{}, 0
	rest := stream.Chunk{Base: h.Base + int64(lo), Lat: h.Lat[lo:], Lon: h.Lon[lo:]}
	if h.IDs != nil {
		rest.IDs = h.IDs[lo:]
	}
	return rest
}

// whileOpening is src for a stream that starts while the GPUs of x's
// StartSearcher open (src itself when they are not opening): split a CPU
// block at a time, the CPU's face cells for x's references built beside
// the first read for a nearest query of enough rows. The warm-up ends
// when the GPUs are adopted (before the CPU engine closes) or when stop,
// which the stream calls as it returns, is called. The caller holds x's
// lock.
func (x *Index) whileOpening(ctx context.Context, src stream.ChunkReader, q StreamQuery) (r stream.ChunkReader, stop func()) {
	o := x.s.opening
	if o == nil || o.ended() {
		return src, func() {}
	}
	w, ok := x.s.eng.(engine.Warmer)
	if rows := src.Rows(); ok && q.nearest() && (rows < 0 || rows >= minWarmRows) {
		req := requestFor(Points{}, x.ref, x.s.opts, x.prepared) // x's own: the searcher's may be another index's
		wctx, cancel := context.WithCancel(ctx)
		x.s.stopWarm()
		x.s.warmStop = cancel
		go func() { _ = w.Warm(wctx, req) }() // a failure is the query's to meet and report
	}
	sp := &openingSplitter{ChunkReader: src, opening: o, block: x.s.openingBlock()}
	if q.nearest() {
		sp.first = x.planFirst()
	}
	return sp, func() { x.locked(x.s.stopWarm) }
}

// planFirst is what plans the GPUs' grid query of a stream's first chunk
// against x's references, on a goroutine of its own, while the CPU
// answers it and the GPUs open (nil when x's references have been
// planned already): the first chunk that moves to the GPUs then finds
// its plan made rather than waiting for it (64 ms for the 135,233 cities
// on one H200). The references count as planned once a plan starts, not
// before: a stream whose GPUs open before its first read, or whose first
// read fails, leaves them to the next. The caller holds x's lock; the
// function returned takes it.
func (x *Index) planFirst() func(stream.Chunk) {
	if x.prepared == nil || x.s.plannedFor == x.prepared {
		return nil
	}
	opts := x.s.opts
	return func(c stream.Chunk) {
		if c.Len() == 0 {
			return
		}
		started := false
		x.locked(func() {
			if started = x.s.plannedFor != x.prepared; started {
				x.s.plannedFor = x.prepared
			}
		})
		if started {
			req := requestFor(sampleOf(Radians64(c.Lat, c.Lon), planAheadSample), x.ref, opts, x.prepared)
			go engines.PlanAhead(req)
		}
	}
}

// minWarmRows is the smallest input whose stream warms the CPU's face
// cells: the CPU engine builds them for a query of 2^14 observations or
// more, and a smaller input is answered before a build would pay.
const minWarmRows = 1 << 14

// stopWarm ends a warm-up whileOpening began, if any.
func (s *Searcher) stopWarm() {
	if s.warmStop != nil {
		s.warmStop()
		s.warmStop = nil
	}
}

// nearest reports whether q asks for the nearest reference.
func (q StreamQuery) nearest() bool {
	kind, _ := q.Kind()
	return kind == stream.KindNearest
}
