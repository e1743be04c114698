package main

import (
	"context"
	"os"
	"sync"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/stream"
)

// peekedReader is a ChunkReader whose first chunk is read on a goroutine
// of its own as soon as it is opened, so that the GPUs' plan can be made
// from it (geoknn.References.PlanFor) while they open; the stream then
// gets that chunk as its first, and the rest from the reader as usual.
type peekedReader struct {
	stream.ChunkReader
	cancel context.CancelFunc
	done   chan struct{}
	first  stream.Chunk
	err    error
	handed bool
	once   sync.Once
}

// peekFirst starts reading r's first chunk and returns r behind a
// peekedReader. Only a regular file is peeked: a pipe's reader may block
// where nothing stops it.
func peekFirst(ctx context.Context, r stream.ChunkReader, path string) stream.ChunkReader {
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return r
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &peekedReader{ChunkReader: r, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.first, p.err = r.Next(ctx, stream.Chunk{})
	}()
	return p
}

// firstChunk waits for the first chunk and returns it when it was read;
// the caller may look at it until it passes r to the stream.
func firstChunk(ctx context.Context, r stream.ChunkReader) (stream.Chunk, bool) {
	p, ok := r.(*peekedReader)
	if !ok {
		return stream.Chunk{}, false
	}
	select {
	case <-p.done:
		return p.first, p.err == nil && p.first.Len() > 0
	case <-ctx.Done():
		return stream.Chunk{}, false
	}
}

// Next is the first chunk at the first call (or the error reading it),
// then the reader's.
func (p *peekedReader) Next(ctx context.Context, dst stream.Chunk) (stream.Chunk, error) {
	if p.handed {
		return p.ChunkReader.Next(ctx, dst)
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		return stream.Chunk{}, ctx.Err()
	}
	p.handed = true
	return p.first, p.err
}

// Close stops the first read if it is still going, then closes the reader.
func (p *peekedReader) Close() error {
	var err error
	p.once.Do(func() {
		p.cancel()
		<-p.done
		err = p.ChunkReader.Close()
	})
	return err
}

// planFromFirst plans the GPUs' grid query of r's first chunk against
// refs while they open, when r was peeked (peekFirst).
func planFromFirst(ctx context.Context, r stream.ChunkReader, refs *geoknn.References, opts geoknn.Options) {
	c, ok := firstChunk(ctx, r)
	if !ok {
		return
	}
	defer opts.Trace.Begin("host", "plan ahead")()
	refs.PlanFor(geoknn.Radians64(c.Lat, c.Lon), opts)
}

// plansAhead reports whether the run's query is one PlanFor plans: the
// nearest reference by the grid algorithm.
func (f *runFlags) plansAhead(opts geoknn.Options) bool {
	kind, _ := f.q.Kind()
	return kind == stream.KindNearest && opts.Algorithm == geoknn.Grid
}
