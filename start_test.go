package geoknn

import (
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/engines"
	"github.com/geoknn/geoknn/sphere"
	"github.com/geoknn/geoknn/stream"
)

// countedEngine counts the nearest and k-nearest calls it answers and
// runs onCall (if set) before the n-th.
type countedEngine struct {
	engine.Engine
	calls  atomic.Int32
	onCall func(n int32)
	closed atomic.Bool
}

func (c *countedEngine) call() {
	n := c.calls.Add(1)
	if c.onCall != nil {
		c.onCall(n)
	}
}

func (c *countedEngine) Nearest(ctx context.Context, req engine.Request, out engine.Result) (engine.Stats, error) {
	c.call()
	return c.Engine.Nearest(ctx, req, out)
}

func (c *countedEngine) KNearest(ctx context.Context, req engine.Request, maxRad float64, out engine.KResult) (engine.Stats, error) {
	c.call()
	return c.Engine.KNearest(ctx, req, maxRad, out)
}

func (c *countedEngine) Close() error {
	c.closed.Store(true)
	return c.Engine.Close()
}

// pinningEngine is a countedEngine that pins, as the GPU engine does.
type pinningEngine struct {
	*countedEngine
	pinned, unpinned atomic.Int32
}

func (p *pinningEngine) RegisterHost(unsafe.Pointer, int) error { p.pinned.Add(1); return nil }
func (p *pinningEngine) UnregisterHost(unsafe.Pointer) error    { p.unpinned.Add(1); return nil }

// startedOnCPU is a searcher answering on a counted CPU engine (one
// worker: blocks of openingRowsPerWorker) while a pinning "GPU" engine
// opens behind it, once release is closed.
func startedOnCPU(t *testing.T, fail error) (s *Searcher, onCPU *countedEngine, gpu *pinningEngine, release chan struct{}) {
	t.Helper()
	release = make(chan struct{})
	inner, err := engines.Open(engines.Options{Kind: engines.CPU, CPUWorkers: 1})
	if err != nil {
		t.Fatal(err)
	}
	gpu = &pinningEngine{countedEngine: &countedEngine{Engine: inner.Engine}}
	s, err = startSearcher(Options{CPUWorkers: 1}, func() (engines.Opened, error) {
		<-release
		return engines.Opened{Engine: gpu, OnGPU: true}, fail
	})
	if err != nil {
		t.Fatal(err)
	}
	onCPU = &countedEngine{Engine: s.eng}
	s.eng = onCPU
	return s, onCPU, gpu, release
}

// startedIndex is an index over ref on a startedOnCPU searcher, closed
// when the test ends (after it has released the opening).
func startedIndex(t *testing.T, ref Points) (x *Index, onCPU *countedEngine, gpu *pinningEngine, release chan struct{}) {
	t.Helper()
	s, onCPU, gpu, release := startedOnCPU(t, nil)
	x, err := s.NewIndex(ref)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x, onCPU, gpu, release
}

// sphereColumns is n points uniform on the sphere as radian columns.
func sphereColumns(t *testing.T, n int, seed uint64) Points {
	t.Helper()
	lat, lon := make([]float64, n), make([]float64, n)
	if err := sphere.SphereRadians(n, seed, lat, lon); err != nil {
		t.Fatal(err)
	}
	return Radians64(lat, lon)
}

// releaseAt makes the CPU engine release the opening before its call-th
// call and wait for it to end, so that the block after that call moves.
func releaseAt(s *Searcher, onCPU *countedEngine, release chan struct{}, call int32) {
	o := s.opening
	onCPU.onCall = func(n int32) {
		if n == call {
			close(release)
			<-o.done
		}
	}
}

// A nearest query that starts on the CPU moves to the GPUs between
// blocks once they are open, with the answers of either engine alone.
func TestStartedNearestMovesBetweenBlocks(t *testing.T) {
	s, onCPU, gpu, release := startedOnCPU(t, nil)
	defer s.Close()
	obs, ref := sphereColumns(t, 5*openingRowsPerWorker+7, 1), sphereColumns(t, 1000, 2)
	releaseAt(s, onCPU, release, 2)
	if !s.Opening() || s.Engine() != CPU {
		t.Fatalf("before the first query: opening %v, engine %v", s.Opening(), s.Engine())
	}
	got, err := s.Nearest(context.Background(), obs, ref)
	if err != nil {
		t.Fatal(err)
	}
	want := plainNearest(t, obs, ref)
	if !slices.Equal(got.Index, want.Index) || !slices.Equal(got.DistanceRad, want.DistanceRad) {
		t.Error("answers differ from the CPU engine's alone")
	}
	if onCPU.calls.Load() != 2 || gpu.calls.Load() != 1 {
		t.Errorf("CPU answered %d blocks, the GPUs %d calls: want 2 and 1", onCPU.calls.Load(), gpu.calls.Load())
	}
	if s.Opening() || s.Engine() != GPU || !onCPU.closed.Load() || s.openingRows.Load() != 2*openingRowsPerWorker {
		t.Errorf("after: opening %v, engine %v, CPU engine closed %v, %d rows on the CPU", s.Opening(), s.Engine(),
			onCPU.closed.Load(), s.openingRows.Load())
	}
}

// plainCPU is a CPU searcher, closed when the test ends.
func plainCPU(t *testing.T) *Searcher {
	t.Helper()
	plain, err := NewSearcher(Options{Engine: CPU})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { plain.Close() })
	return plain
}

func plainNearest(t *testing.T, obs, ref Points) *Result {
	t.Helper()
	want, err := plainCPU(t).Nearest(context.Background(), obs, ref)
	if err != nil {
		t.Fatal(err)
	}
	return want
}

// A k-nearest query moves between blocks too, rows whole.
func TestStartedKNearestMovesBetweenBlocks(t *testing.T) {
	s, onCPU, gpu, release := startedOnCPU(t, nil)
	defer s.Close()
	obs, ref := sphereColumns(t, 3*openingRowsPerWorker+5, 3), sphereColumns(t, 500, 4)
	releaseAt(s, onCPU, release, 1)
	got, err := s.KNearest(context.Background(), obs, ref, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	want, err := plainCPU(t).KNearest(context.Background(), obs, ref, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Index, want.Index) || !slices.Equal(got.DistanceRad, want.DistanceRad) {
		t.Error("rows differ from the CPU engine's alone")
	}
	if onCPU.calls.Load() != 1 || gpu.calls.Load() != 1 {
		t.Errorf("CPU answered %d blocks, the GPUs %d calls: want 1 and 1", onCPU.calls.Load(), gpu.calls.Load())
	}
}

// GPUs that fail to open leave the searcher on the CPU, saying why.
func TestStartedOpeningFails(t *testing.T) {
	s, onCPU, gpu, release := startedOnCPU(t, errors.New("no context"))
	defer s.Close()
	close(release)
	if err := s.WaitOpened(context.Background()); err != nil {
		t.Fatal(err)
	}
	obs, ref := sphereColumns(t, 2*openingRowsPerWorker, 5), sphereColumns(t, 100, 6)
	if _, err := s.Nearest(context.Background(), obs, ref); err != nil {
		t.Fatal(err)
	}
	if s.Engine() != CPU || s.Fallback() != "GPU unusable: no context" || onCPU.calls.Load() != 1 || gpu.calls.Load() != 0 {
		t.Errorf("engine %v, fallback %q, calls CPU %d GPU %d", s.Engine(), s.Fallback(), onCPU.calls.Load(), gpu.calls.Load())
	}
}

// WaitOpened gives up with its context; Close waits for the opening and
// closes what it opened; CloseAtExit leaves it to the exit.
func TestStartedCloses(t *testing.T) {
	s, _, gpu, release := startedOnCPU(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if err := s.WaitOpened(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitOpened before the opening ends: %v", err)
	}
	go close(release)
	if err := s.Close(); err != nil || !gpu.closed.Load() {
		t.Fatalf("Close: %v, opened engine closed %v", err, gpu.closed.Load())
	}

	s, _, gpu, release = startedOnCPU(t, nil)
	if err := s.CloseAtExit(); err != nil || gpu.closed.Load() {
		t.Fatalf("CloseAtExit: %v, opened engine closed %v", err, gpu.closed.Load())
	}
	if _, err := s.Nearest(context.Background(), Points{}, Points{}); !errors.Is(err, ErrClosed) {
		t.Errorf("a call after CloseAtExit: %v", err)
	}
	close(release)
}

// Pinning is for the GPUs: Pin waits for them to open.
func TestStartedPinWaits(t *testing.T) {
	s, _, gpu, release := startedOnCPU(t, nil)
	defer s.Close()
	go close(release)
	unpin, err := s.Pin(sphereColumns(t, 10, 7))
	if err != nil || gpu.pinned.Load() != 2 || s.Engine() != GPU {
		t.Fatalf("Pin: %v, %d ranges pinned, engine %v", err, gpu.pinned.Load(), s.Engine())
	}
	if err := unpin(); err != nil || gpu.unpinned.Load() != 2 {
		t.Fatalf("unpin: %v, %d ranges unpinned", err, gpu.unpinned.Load())
	}
}

// chunksOf reads p in chunks of size points, reusing its buffers as a
// file reader does.
type chunksOf struct {
	p    Points
	size int
	next int
}

func (c *chunksOf) Next(_ context.Context, dst stream.Chunk) (stream.Chunk, error) {
	n := min(c.size, c.p.Len()-c.next)
	if n <= 0 {
		return dst, io.EOF
	}
	lat, lon := c.p.Float64()
	dst.Base = int64(c.next)
	dst.Lat = append(dst.Lat[:0], lat[c.next:c.next+n]...)
	dst.Lon = append(dst.Lon[:0], lon[c.next:c.next+n]...)
	c.next += n
	return dst, nil
}

func (c *chunksOf) Rows() int64  { return int64(c.p.Len()) }
func (c *chunksOf) Close() error { return nil }

// A stream's first chunks are answered on the CPU; once the GPUs open the
// rest go to them, with its buffers pinned as they come round, and the
// answers are the CPU engine's alone.
func TestStartedStreamMovesToTheGPUs(t *testing.T) {
	ref := sphereColumns(t, 800, 8)
	x, onCPU, gpu, release := startedIndex(t, ref)
	obs := sphereColumns(t, 24*openingRowsPerWorker, 9)
	releaseAt(x.s, onCPU, release, 3)
	var got []uint32
	sink := func(_ stream.Chunk, a stream.Answers) error {
		for i := range a.N {
			r, _ := a.Nearest(i)
			got = append(got, r)
		}
		return nil
	}
	st, err := x.Stream(context.Background(), &chunksOf{p: obs, size: 2 * openingRowsPerWorker}, sink, StreamQuery{Depth: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, plainNearest(t, obs, ref).Index) {
		t.Error("answers differ from the CPU engine's alone")
	}
	if st.OpeningRows != 3*openingRowsPerWorker || gpu.calls.Load() == 0 || gpu.pinned.Load() == 0 ||
		gpu.unpinned.Load() != gpu.pinned.Load() {
		t.Errorf("%d rows on the CPU, %d calls on the GPUs, %d ranges pinned, %d unpinned", st.OpeningRows,
			gpu.calls.Load(), gpu.pinned.Load(), gpu.unpinned.Load())
	}
	if st.Engine.Engine != "cpu" { // the fake GPU engine is the CPU's
		t.Errorf("engine %q", st.Engine.Engine)
	}
}

// sampleOf copies at most n points, evenly spaced, in order.
func TestSampleOf(t *testing.T) {
	obs := sphereColumns(t, 10, 11)
	s := sampleOf(obs, 4)
	if s.Len() != 4 {
		t.Fatalf("%d points", s.Len())
	}
	for k, i := range []int{0, 2, 5, 7} {
		if la, lo := s.At(k); la != latOf(obs.At(i)) || lo != lonOf(obs.At(i)) {
			t.Errorf("point %d is not observation %d", k, i)
		}
	}
	if s := sampleOf(obs, 100); s.Len() != 10 {
		t.Errorf("a sample of 100 of 10: %d points", s.Len())
	}
}

func latOf(lat, _ float64) float64 { return lat }
func lonOf(_, lon float64) float64 { return lon }

// A stream and other queries on the same index while the GPUs open and
// after: the engine moves under the index's lock (run with -race).
func TestStartedStreamBesideQueries(t *testing.T) {
	x, _, _, release := startedIndex(t, sphereColumns(t, 800, 8))
	obs := sphereColumns(t, 400*1000, 9)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sink := func(stream.Chunk, stream.Answers) error { return nil }
		if _, err := x.Stream(context.Background(), &chunksOf{p: obs, size: 1000}, sink, StreamQuery{Depth: 2}); err != nil {
			t.Error(err)
		}
	}()
	other := sphereColumns(t, 1000, 10)
	for i := 0; i < 50; i++ {
		if i == 10 {
			close(release)
		}
		if _, err := x.Nearest(context.Background(), other); err != nil {
			t.Error(err)
		}
	}
	wg.Wait()
}
