package pipeline

import (
	"context"

	"github.com/geoknn/geoknn/stream"
)

// Query answers one chunk of points: it fills buffers of its own, held in
// *scratch (the same slot's from one chunk to a later one, so they are
// reused), and returns the answers as the writers read them (N and the
// kind's functions; Base is set by Stream). It may be called for chunk
// i+1 while chunk i's answers are still being written, never with the
// same scratch.
type Query[A any] func(ctx context.Context, c stream.Chunk, scratch *A) (stream.Answers, error)

// slot is a chunk, the query's buffers for it, and its answers.
type slot[A any] struct {
	chunk   stream.Chunk
	scratch A
	answers stream.Answers
}

// Stream reads r's chunks, answers each with query and writes the answers
// to w in order, depth chunks in flight (3: one a stage). It does not
// close r or finish w: on success the caller closes w (its footer), on
// an error it aborts w and drops the output.
func Stream[A any](ctx context.Context, depth int, r stream.ChunkReader, w stream.AnswerWriter, query Query[A]) (Stats, error) {
	return Run(ctx, depth, func() *slot[A] { return new(slot[A]) }, Stages[slot[A]]{
		Read: func(ctx context.Context, s *slot[A]) error {
			c, err := r.Next(ctx, s.chunk)
			if err == nil {
				s.chunk = c
			}
			return err
		},
		Query: func(ctx context.Context, s *slot[A]) error {
			a, err := query(ctx, s.chunk, &s.scratch)
			a.Base = int(s.chunk.Base)
			s.answers = a
			return err
		},
		Write: func(ctx context.Context, s *slot[A]) error { return w.Write(s.answers) },
	})
}
