package geoknn

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/pipeline"
	"github.com/geoknn/geoknn/stream"
)

// StreamQuery is a Query as Index.Stream takes it, with the chunks in
// flight: the nearest reference (the zero value), the K nearest (within
// MaxMetres when it is above 0), or the references within RadiusMetres
// (their count, or with List which they are, nearest first). Its fields
// are Query's, so that a literal written before Query still compiles.
type StreamQuery struct {
	K            int
	MaxMetres    float64
	RadiusMetres float64
	Within       bool // as Query's: a radius of 0 asked for
	List         bool
	// ExcludeSelf says the observations are the references: observation
	// i of the whole stream leaves out reference i (a k-nearest query
	// asks the engine for K+1 and drops it; K 0 means 1).
	ExcludeSelf bool
	// Depth is the chunks in flight, one a stage at 3 (0 means 3): the
	// memory a stream holds is about Depth chunks and their answers.
	Depth int
}

// Query is the question q asks of every observation.
func (q StreamQuery) Query() Query {
	return Query{K: q.K, MaxMetres: q.MaxMetres, RadiusMetres: q.RadiusMetres, Within: q.Within, List: q.List,
		ExcludeSelf: q.ExcludeSelf}
}

// Streamed is q as Index.Stream takes it, depth chunks in flight.
func (q Query) Streamed(depth int) StreamQuery {
	return StreamQuery{K: q.K, MaxMetres: q.MaxMetres, RadiusMetres: q.RadiusMetres, Within: q.Within, List: q.List,
		ExcludeSelf: q.ExcludeSelf, Depth: depth}
}

// Kind is the answers' kind, as the pointio and arrowio answer writers
// take it, and K their references a row (KindKNearest): Query.Kind.
func (q StreamQuery) Kind() (kind stream.AnswerKind, k int) { return q.Query().Kind() }

// AnswerSink takes a stream's answers a chunk at a time, in input order,
// with the chunk of points they answer (its IDs say which observations).
// Both are valid only until the sink returns; the answers' functions may
// be called from several goroutines at once while it runs.
type AnswerSink func(c stream.Chunk, a stream.Answers) error

// WriterSink is the sink that writes the answers to w (a CSV, .npz,
// Parquet or Arrow answer writer), which the caller closes after Stream
// returns (or aborts on an error).
func WriterSink(w stream.AnswerWriter) AnswerSink {
	return func(_ stream.Chunk, a stream.Answers) error { return w.Write(a) }
}

// StreamStats is how a stream ran: its chunks and rows, each stage's busy
// time (the stage busy for about Wall is the one the stream waits on), the
// time reading waited for a free slot and writing for answers, and the
// engine's account of the queries (device times and jobs summed over
// chunks).
type StreamStats struct {
	Chunks              int
	Rows                int64
	Read, Query, Write  time.Duration
	Wall                time.Duration
	ReadWait, WriteWait time.Duration
	Engine              Stats
	// OpeningRows are the observations the index's engine answered on
	// the CPU while the GPUs of a StartSearcher opened, during the stream
	// (other queries on the same engine meanwhile included).
	OpeningRows int64
}

// Stream answers q for every observation src yields, a chunk at a time,
// and hands each chunk's answers to sink in input order, while later
// chunks are read and queried: read, query and write overlap, and the
// memory held is set by the chunks' size and q.Depth, not by how many
// observations there are. The first error (src's, the query's, sink's or
// ctx's) stops the stream: no chunk read after it is queried. Stream
// neither closes src nor finishes what sink writes to.
func (x *Index) Stream(ctx context.Context, src stream.ChunkReader, sink AnswerSink, q StreamQuery) (StreamStats, error) {
	if x.closed.Load() {
		return StreamStats{}, ErrClosed
	}
	if ctx == nil || src == nil || sink == nil {
		return StreamStats{}, errors.New("geoknn: Stream needs a context, a source and a sink")
	}
	if err := q.Query().Check(x.Len()); err != nil {
		return StreamStats{}, err
	}
	_, k := q.Kind()
	var st StreamStats
	stopWarm := func() {}
	x.locked(func() {
		x.s.expect(src.Rows(), k)
		src, stopWarm = x.whileOpening(ctx, src, q)
	})
	defer stopWarm()
	defer x.locked(func() { x.s.expected = [2]int{} }) // a later adopt has no stream to expect
	openingRows := x.s.openingRows.Load()
	pins := newStreamPins(x.s)
	tr := x.s.opts.Trace
	depth := q.Depth
	if depth <= 0 {
		depth = 3
	}
	ps, err := pipeline.Run(ctx, depth, func() *streamSlot { return &streamSlot{} }, pipeline.Stages[streamSlot]{
		Read: func(ctx context.Context, s *streamSlot) error {
			defer tr.Begin("host: read", "read chunk")()
			c, err := src.Next(ctx, s.chunk)
			if err == nil {
				s.chunk = c
			}
			return err
		},
		Query: func(ctx context.Context, s *streamSlot) error {
			defer tr.Begin("host: query", "query chunk")()
			return x.answerChunk(ctx, q.Query(), s, pins, &st)
		},
		Write: func(_ context.Context, s *streamSlot) error {
			defer tr.Begin("host: write", "write chunk")()
			err := sink(s.chunk, s.answers)
			if s.lists != nil && err == nil {
				// Lists found as they were written: a failed window
				// fails the chunk.
				err = s.lists.failed()
			}
			return err
		},
	})
	st.Chunks, st.Read, st.Query, st.Write, st.Wall = ps.Chunks, ps.Read, ps.Query, ps.Write, ps.Wall
	st.ReadWait, st.WriteWait = ps.ReadWait, ps.WriteWaiting
	st.OpeningRows = x.s.openingRows.Load() - openingRows
	return st, errors.Join(err, pins.release())
}

// expect lets the engine get ready for a stream of n observations (-1:
// unknown), k answers each: the GPU engine opens its GPUs beyond the
// first now, behind it, while the first chunks are read and answered on
// the first, rather than when the stream first pins a buffer, which
// waits for every GPU (2^27 Parquet on 2 x H200: a chunk held 358 ms
// while the second GPU opened).
func (s *Searcher) expect(n int64, k int) {
	if n <= 0 {
		return
	}
	s.expected = [2]int{int(min(n, math.MaxInt32)), k} // for GPUs still opening
	if e, ok := s.eng.(engine.Expecter); ok {
		e.Expect(s.expected[0], k)
	}
}

// streamSlot is a chunk in flight: its points, the query's buffers (kept
// from one chunk to the next in the slot) and its answers.
type streamSlot struct {
	chunk   stream.Chunk
	nearest Result
	k       KResult
	answers stream.Answers
	lists   *listWindows // radius lists found as the chunk is written; nil: none
}

// answerChunk answers s's chunk of q into s's buffers (pinned by pins
// as they come round) and adds the engine's account to st.
func (x *Index) answerChunk(ctx context.Context, q Query, s *streamSlot, pins *streamPins, st *StreamStats) error {
	x.locked(func() {
		x.s.adopt() // GPUs opened behind the CPU take this chunk and pin its memory
		pins.points(s.chunk.Lat, s.chunk.Lon)
	})
	s.lists = nil
	obs := Radians64(s.chunk.Lat, s.chunk.Lon)
	base := s.chunk.Base
	self := func(j int) uint32 { return uint32(base + int64(j)) }
	var (
		a   stream.Answers
		es  Stats
		err error
	)
	switch kind, _ := q.Kind(); kind {
	case stream.KindNearest:
		x.locked(func() { pins.answers(s.nearest.Index, s.nearest.DistanceRad) })
		err = x.NearestInto(ctx, obs, &s.nearest)
		a, es = s.nearest.Answers(), s.nearest.Stats
	case stream.KindKNearest:
		s.k.K = q.Asked()
		x.locked(func() { pins.answers(s.k.Index, s.k.DistanceRad) })
		err = x.KNearestInto(ctx, obs, q.MaxMetres, &s.k)
		res := &s.k
		if err == nil && q.ExcludeSelf {
			res = res.Without(self)
		}
		a, es = res.Answers(), res.Stats
	default:
		a, es, s.lists, err = x.withinChunk(ctx, q, obs, self, listWindowBudget())
	}
	if err != nil {
		return err
	}
	a.Base, a.N = int(base), obs.Len()
	s.answers = a
	st.Rows += int64(a.N)
	st.Engine = addStats(st.Engine, es)
	return nil
}

// locked runs fn under the index's engine mutex: the searcher's engine
// may move from the CPU to the GPUs (adopt) under it at any query.
func (x *Index) locked(fn func()) {
	x.eng.mu.Lock()
	defer x.eng.mu.Unlock()
	fn()
}

// addStats adds one chunk's account b to a stream's a: the engine and
// devices of the last chunk the engine ran (not the calling goroutine's
// small ones), times and counts summed.
func addStats(a, b Stats) Stats {
	if a.Engine == "" || len(b.Devices) != 1 || b.Devices[0] != "calling goroutine" {
		a.Engine, a.Devices, a.Note = b.Engine, b.Devices, b.Note
	}
	a.Jobs += b.Jobs
	a.Wall += b.Wall
	a.Kernel += b.Kernel
	a.Index += b.Index
	a.Upload += b.Upload
	a.Download += b.Download
	a.Refined += b.Refined
	return a
}
