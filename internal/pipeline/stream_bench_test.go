package pipeline

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/arrowio"
)

// benchInput is the Parquet file of points the benchmarks stream:
// $GEOKNN_BENCH_PARQUET when set (written by TestWriteBenchInput, so the
// benchmark's process holds none of the writing), else 2^22 points made
// here.
func benchInput(b *testing.B) string {
	if p := os.Getenv("GEOKNN_BENCH_PARQUET"); p != "" {
		return p
	}
	return writePointsFile(b, "bench.parquet", 1<<22)
}

// TestWriteBenchInput writes $GEOKNN_BENCH_PARQUET with 2^24 points (run
// alone, before the benchmarks).
func TestWriteBenchInput(t *testing.T) {
	path := os.Getenv("GEOKNN_BENCH_PARQUET")
	if path == "" {
		t.Skip("GEOKNN_BENCH_PARQUET names no file to write")
	}
	tmp := writePointsFile(t, "in.parquet", 1<<24)
	data, err := os.ReadFile(tmp)
	if err == nil {
		err = os.WriteFile(path, data, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// Parquet points to Parquet answers with the cheap query: today's path
// (read whole, answer whole, write whole) beside the pipeline's, with the
// peak heap in use of each (nearly all live: peakHeap collects often).
// With $GEOKNN_BENCH_RSS set the collector runs as in the command, and
// /usr/bin/time -v on one of them alone gives the process's peak RSS.
func BenchmarkParquetToParquet(b *testing.B) {
	in := benchInput(b)
	out := filepath.Join(b.TempDir(), "out.parquet")
	paths := map[string]func(w *bufio.Writer){
		"whole": func(w *bufio.Writer) {
			lat, lon, _, err := arrowio.ReadFileRadians(context.Background(), in, pointio.ReadOptions{})
			if err != nil {
				b.Fatal(err)
			}
			idx := make([]uint32, len(lat)) // the answers, as a query's
			for i := range idx {
				idx[i], _ = cheapAnswer(lat[i], lon[i])
			}
			answer := func(i int) (uint32, float64) { _, m := cheapAnswer(lat[i], lon[i]); return idx[i], m }
			if err := arrowio.WriteResults(w, pointio.FormatParquet, len(lat), answer); err != nil {
				b.Fatal(err)
			}
		},
		"stream": func(w *bufio.Writer) { streamAnswers(b, in, pointio.FormatParquet, w) },
	}
	for _, name := range []string{"whole", "stream"} {
		b.Run(name, func(b *testing.B) {
			run := func() {
				if err := pointio.WriteAtomic(out, func(w *bufio.Writer) error { paths[name](w); return nil }); err != nil {
					b.Fatal(err)
				}
			}
			if os.Getenv("GEOKNN_BENCH_RSS") != "" {
				// The collector as the command runs it: for /usr/bin/time.
				for b.Loop() {
					run()
				}
				return
			}
			var peak uint64
			for b.Loop() {
				peak = max(peak, peakHeap(run))
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}
