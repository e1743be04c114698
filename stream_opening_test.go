package geoknn

import (
	"context"
	"io"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/stream"
)

// idChunks reads n rows (latitude i, id "i") in chunks of size.
type idChunks struct{ n, size, next int }

func (c *idChunks) Next(_ context.Context, dst stream.Chunk) (stream.Chunk, error) {
	m := min(c.size, c.n-c.next)
	if m <= 0 {
		return dst, io.EOF
	}
	dst.Base, dst.Lat, dst.Lon, dst.IDs = int64(c.next), dst.Lat[:0], dst.Lon[:0], dst.IDs[:0]
	for i := c.next; i < c.next+m; i++ {
		dst.Lat, dst.Lon, dst.IDs = append(dst.Lat, float64(i)), append(dst.Lon, -float64(i)), append(dst.IDs, strconv.Itoa(i))
	}
	c.next += m
	return dst, nil
}

func (c *idChunks) Rows() int64  { return int64(c.n) }
func (c *idChunks) Close() error { return nil }

// While the GPUs open, chunks go out a block at a time, copied; once they
// have opened, the rest of the held chunk goes out whole, then the
// reader's chunks as they come. Every row comes once, in order, with its
// id.
func TestOpeningSplitter(t *testing.T) {
	o := &opening{done: make(chan struct{})}
	p := &openingSplitter{ChunkReader: &idChunks{n: 23, size: 8}, opening: o, block: 3}
	var sizes []int
	var dst stream.Chunk
	next := 0
	for {
		if len(sizes) == 4 {
			close(o.done) // the GPUs open after four blocks
		}
		c, err := p.Next(context.Background(), dst)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for i := range c.Len() {
			if c.Base+int64(i) != int64(next) || c.Lat[i] != float64(next) || c.Lon[i] != -float64(next) || c.IDs[i] != strconv.Itoa(next) {
				t.Fatalf("row %d of the chunk at %d: (%v, %v, %q), want row %d", i, c.Base, c.Lat[i], c.Lon[i], c.IDs[i], next)
			}
			next++
		}
		sizes = append(sizes, c.Len())
		dst = c
	}
	if want := []int{3, 3, 2, 3, 5, 7}; !slices.Equal(sizes, want) || next != 23 {
		t.Errorf("chunks of %v (%d rows), want %v", sizes, next, want)
	}
}

// warmingEngine records the references it is warmed for and holds each
// warm-up until its context ends.
type warmingEngine struct {
	engine.Engine
	warmed chan *engine.Prepared
	ended  chan error
}

func (w *warmingEngine) Warm(ctx context.Context, req engine.Request) error {
	w.warmed <- req.Prepared
	<-ctx.Done()
	w.ended <- ctx.Err()
	return ctx.Err()
}

// A stream that starts while the GPUs open warms the CPU for its own
// index's references (not those of the index that queried the searcher
// last), and the warm-up ends with the stream; a small input warms none.
func TestStreamWarmsItsOwnReferences(t *testing.T) {
	ref := sphereColumns(t, 800, 8)
	x, onCPU, _, release := startedIndex(t, ref)
	defer close(release)
	w := &warmingEngine{Engine: onCPU, warmed: make(chan *engine.Prepared, 2), ended: make(chan error, 2)}
	x.s.eng = w
	x2, err := x.Replaced(sphereColumns(t, 900, 10))
	if err != nil {
		t.Fatal(err)
	}
	defer x2.Close()
	if _, err := x.Nearest(context.Background(), sphereColumns(t, 3*openingRowsPerWorker, 11)); err != nil {
		t.Fatal(err)
	}
	sink := func(stream.Chunk, stream.Answers) error { return nil }
	obs := sphereColumns(t, minWarmRows, 12)
	if _, err := x2.Stream(context.Background(), &chunksOf{p: obs, size: minWarmRows}, sink, StreamQuery{}); err != nil {
		t.Fatal(err)
	}
	if got := <-w.warmed; got != x2.prepared {
		t.Error("warmed for another index's references")
	}
	if err := <-w.ended; err == nil {
		t.Error("the warm-up outlived the stream")
	}
	small := sphereColumns(t, minWarmRows-1, 13)
	if _, err := x2.Stream(context.Background(), &chunksOf{p: small, size: 1000}, sink, StreamQuery{}); err != nil {
		t.Fatal(err)
	}
	if len(w.warmed) != 0 {
		t.Error("a small input was warmed for")
	}
}

// A nearest stream that starts while the GPUs open plans the GPUs' query
// of its first chunk against its own index's references, beside the
// CPU's answers; a k-nearest stream plans nothing.
func TestStreamPlansItsFirstChunk(t *testing.T) {
	ref := sphereColumns(t, 20000, 8)
	x, _, _, release := startedIndex(t, ref)
	defer close(release)
	sink := func(stream.Chunk, stream.Answers) error { return nil }
	obs := sphereColumns(t, 3*openingRowsPerWorker, 12)
	if _, err := x.Stream(context.Background(), &chunksOf{p: obs, size: 1 << 15}, sink, StreamQuery{K: 2}); err != nil {
		t.Fatal(err)
	}
	if x.s.plannedFor != nil {
		t.Fatal("a k-nearest stream planned a nearest query")
	}
	if _, err := x.Stream(context.Background(), &chunksOf{p: obs, size: 1 << 15}, sink, StreamQuery{}); err != nil {
		t.Fatal(err)
	}
	if x.s.plannedFor != x.prepared {
		t.Fatal("the stream's references were not planned for")
	}
	// The plan is made on a goroutine of its own: wait for it (a bound
	// far beyond its milliseconds, for a loaded machine).
	for deadline := time.Now().Add(time.Minute); x.prepared.Plans.Len() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no plan for the first chunk after a minute")
		}
	}
}
