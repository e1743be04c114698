package geoknn

import (
	"context"
	"slices"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/stream"
)

// openingSplitter hands a stream's chunks out a CPU block at a time while
// the GPUs of a StartSearcher open, so that each block's answers are
// written as soon as the CPU has them rather than with the whole chunk (a
// chunk sized for GPUs holds about eight CPU blocks); once the GPUs have
// opened, the rest of the chunk goes out in one piece and later chunks
// pass through whole. Blocks are copied out of the chunk the splitter
// holds, never handed out as views of it: the stream gives every chunk
// back to the reader as a later read's buffer.
type openingSplitter struct {
	stream.ChunkReader
	opening *opening
	block   int
	held    stream.Chunk // the chunk being handed out, and the reads' buffer
	at      int          // rows of held handed out
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
	p.held, p.at = c, 0
	return p.cut(dst), nil
}

// cut copies into dst's columns the next block of the held chunk, or all
// the rest of it once the GPUs have opened.
func (p *openingSplitter) cut(dst stream.Chunk) stream.Chunk {
	lo, hi := p.at, p.held.Len()
	if !p.opening.ended() {
		hi = min(hi, lo+p.block)
	}
	p.at = hi
	dst.Base = p.held.Base + int64(lo)
	dst.Lat, dst.Lon = slices.Grow(dst.Lat[:0], hi-lo)[:hi-lo], slices.Grow(dst.Lon[:0], hi-lo)[:hi-lo]
	index.ParallelCopy(dst.Lat, p.held.Lat[lo:hi])
	index.ParallelCopy(dst.Lon, p.held.Lon[lo:hi])
	if p.held.IDs == nil {
		dst.IDs = nil
	} else {
		dst.IDs = append(dst.IDs[:0], p.held.IDs[lo:hi]...)
	}
	return dst
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
	return &openingSplitter{ChunkReader: src, opening: o, block: x.s.openingBlock()}, func() { x.locked(x.s.stopWarm) }
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
