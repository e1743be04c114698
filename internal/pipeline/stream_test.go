package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/arrowio"
	"github.com/geoknn/geoknn/pointio/csvio"
	"github.com/geoknn/geoknn/pointio/formats"
	"github.com/geoknn/geoknn/pointio/numpyio"
	"github.com/geoknn/geoknn/stream"
	"github.com/paulmach/orb"
)

// cheapAnswer is the test query: a reference and a distance that are a
// function of the point alone, so both paths give the same answers.
func cheapAnswer(lat, lon float64) (uint32, float64) {
	return uint32(math.Float64bits(lon)>>20) % 135_233, math.Abs(lat) * 6371008.8
}

// cheapQuery answers a chunk into the scratch buffers.
func cheapQuery(_ context.Context, c stream.Chunk, scratch *[]uint32) (stream.Answers, error) {
	idx := append((*scratch)[:0], make([]uint32, c.Len())...)
	for i := range idx {
		idx[i], _ = cheapAnswer(c.Lat[i], c.Lon[i])
	}
	*scratch = idx
	return stream.Answers{N: c.Len(), Nearest: func(i int) (uint32, float64) {
		_, m := cheapAnswer(c.Lat[i], c.Lon[i])
		return idx[i], m
	}}, nil
}

// writePointsFile writes n points to a file of the format the name says.
func writePointsFile(t testing.TB, name string, n int) string {
	pts := make([]orb.Point, n)
	for i := range pts {
		pts[i] = orb.Point{float64(i%35999)/100 - 179.99, float64(i%17999)/100 - 89.99}
	}
	path := filepath.Join(t.TempDir(), name)
	err := pointio.WriteAtomic(path, func(w *bufio.Writer) error {
		switch filepath.Ext(name) {
		case ".parquet", ".arrow":
			return arrowio.WritePoints(w, filepath.Ext(name)[1:], pts)
		case ".npy":
			return numpyio.WritePointsNPY(w, pts)
		}
		return csvio.WritePoints(w, pts)
	})
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// wholeAnswers is today's path: the file read whole, answered, written.
func wholeAnswers(t testing.TB, in, format string) []byte {
	lat, lon, _, err := formats.ReadRadians(context.Background(), in, pointio.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	answer := func(i int) (uint32, float64) { return cheapAnswer(lat[i], lon[i]) }
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	switch format {
	case pointio.FormatParquet, pointio.FormatArrow:
		err = arrowio.WriteResults(w, format, len(lat), answer)
	case pointio.FormatNPZ:
		err = numpyio.WriteResultsNPZ(w, len(lat), answer)
	default:
		err = csvio.WriteResults(w, len(lat), answer)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// streamAnswers is the pipeline's path, into w.
func streamAnswers(t testing.TB, in, format string, out *bufio.Writer) Stats {
	ctx := context.Background()
	r, err := formats.OpenChunks(ctx, in, pointio.ReadOptions{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var aw stream.AnswerWriter
	switch format {
	case pointio.FormatParquet, pointio.FormatArrow:
		aw, err = arrowio.NewAnswerWriter(out, format, stream.KindNearest, 1, arrowio.StreamOptions{})
	case pointio.FormatNPZ:
		aw, err = numpyio.NewNPZAnswerWriter(out, stream.KindNearest, 1, int(r.Rows()), t.TempDir())
	default:
		aw, err = csvio.NewAnswerWriter(out, stream.KindNearest, 1)
	}
	if err != nil {
		t.Fatal(err)
	}
	st, err := Stream(ctx, 3, r, aw, cheapQuery)
	if err == nil {
		err = aw.Close()
	}
	if err == nil {
		err = out.Flush()
	}
	if err != nil {
		aw.Abort()
		t.Fatal(err)
	}
	return st
}

// Files streamed through the pipeline give today's bytes, every input
// and output format.
func TestStreamAsWhole(t *testing.T) {
	for _, in := range []string{"p.parquet", "p.arrow", "p.npy", "p.csv"} {
		path := writePointsFile(t, in, 300_000)
		for _, format := range []string{pointio.FormatParquet, pointio.FormatArrow, pointio.FormatNPZ, pointio.FormatCSV} {
			want := wholeAnswers(t, path, format)
			var b bytes.Buffer
			st := streamAnswers(t, path, format, bufio.NewWriter(&b))
			if !bytes.Equal(b.Bytes(), want) {
				t.Errorf("%s -> %s: %d bytes streamed in %d chunks, want today's %d", in, format, b.Len(), st.Chunks, len(want))
			}
		}
	}
}

// peakHeap runs f and samples the heap in use meanwhile: the most seen.
// The collector runs at every 10% of growth meanwhile, so what is seen is
// nearly all live memory, not garbage awaiting a collection.
func peakHeap(f func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	f()
	close(stop)
	<-done
	return peak.Load()
}

// Streaming 2^22 points Parquet to Parquet holds a bounded heap, where
// today's path holds every point, its answer and the encoding.
func TestStreamMemoryBound(t *testing.T) {
	if testing.Short() {
		t.Skip("2^22 points: a few seconds")
	}
	in := writePointsFile(t, "big.parquet", 1<<22)
	out, err := os.Create(filepath.Join(t.TempDir(), "out.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	peak := peakHeap(func() { streamAnswers(t, in, pointio.FormatParquet, bufio.NewWriterSize(out, 1<<20)) })
	t.Logf("peak heap streaming 2^22 points: %d MiB", peak>>20)
	if limit := uint64(streamHeapLimitMiB()) << 20; peak > limit {
		t.Errorf("peak heap %d MiB streaming 2^22 points, want under %d MiB", peak>>20, limit>>20)
	}
}

// streamHeapLimitMiB is the bound for this host: the writer encodes a row
// group (about 40 MiB held) a core, the readers hold two each, at most
// four readers.
func streamHeapLimitMiB() int {
	procs := runtime.GOMAXPROCS(0)
	return 160 + 48*min(procs, 25) + 64*min(procs, 4)
}
