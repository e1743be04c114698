package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/geoknn/geoknn/stream"
)

// chunkList reads chunks of n rows from lat, then err (io.EOF when nil).
type chunkList struct {
	lat    []float64
	n, at  int
	err    error
	closed bool
}

func (c *chunkList) Next(_ context.Context, _ stream.Chunk) (stream.Chunk, error) {
	if c.at >= len(c.lat) {
		if c.err != nil {
			return stream.Chunk{}, c.err
		}
		return stream.Chunk{}, io.EOF
	}
	hi := min(c.at+c.n, len(c.lat))
	ch := stream.Chunk{Base: int64(c.at), Lat: c.lat[c.at:hi], Lon: c.lat[c.at:hi]}
	c.at = hi
	return ch, nil
}

func (c *chunkList) Rows() int64  { return int64(len(c.lat)) }
func (c *chunkList) Close() error { c.closed = true; return nil }

// regularFile is the path of a new empty file.
func regularFile(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "obs")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A peeked reader shows its first chunk, then hands the stream the same
// chunks in the same order as the reader alone.
func TestPeekedReaderKeepsOrder(t *testing.T) {
	ctx := context.Background()
	inner := &chunkList{lat: []float64{0, 1, 2, 3, 4, 5, 6}, n: 3}
	r := peekFirst(ctx, inner, regularFile(t))
	first, ok := firstChunk(ctx, r)
	if !ok || !slices.Equal(first.Lat, []float64{0, 1, 2}) {
		t.Fatalf("first chunk %v, %v", first.Lat, ok)
	}
	var bases []int64
	for {
		c, err := r.Next(ctx, stream.Chunk{})
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		bases = append(bases, c.Base)
	}
	if !slices.Equal(bases, []int64{0, 3, 6}) || r.Rows() != 7 {
		t.Errorf("chunks at %v of %d rows", bases, r.Rows())
	}
	if r.Close(); !inner.closed {
		t.Error("reader not closed")
	}
}

// The first chunk's error comes from the stream's first Next; a reader
// closed before any Next closes its own; only regular files are peeked.
func TestPeekedReaderEdges(t *testing.T) {
	ctx := context.Background()
	bad := errors.New("obs: row 1: latitude 91")
	r := peekFirst(ctx, &chunkList{err: bad}, regularFile(t))
	if _, ok := firstChunk(ctx, r); ok {
		t.Error("a failed read gave a first chunk")
	}
	if _, err := r.Next(ctx, stream.Chunk{}); err != bad {
		t.Errorf("first Next: %v, want %v", err, bad)
	}
	inner := &chunkList{lat: []float64{1}, n: 1}
	if peekFirst(ctx, inner, t.TempDir()).Close(); !inner.closed {
		t.Error("a folder's reader was not closed")
	}
	if r := peekFirst(ctx, inner, t.TempDir()); r != stream.ChunkReader(inner) {
		t.Error("a folder was peeked")
	}
	inner = &chunkList{lat: []float64{1}, n: 1}
	if peekFirst(ctx, inner, regularFile(t)).Close(); !inner.closed {
		t.Error("closed before any Next: reader not closed")
	}
	if _, ok := firstChunk(ctx, inner); ok {
		t.Error("an unpeeked reader gave a first chunk")
	}
}
