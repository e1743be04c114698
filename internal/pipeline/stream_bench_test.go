package pipeline

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/arrowio"
	"github.com/geoknn/geoknn/pointio/csvio"
	"github.com/geoknn/geoknn/pointio/formats"
	"github.com/geoknn/geoknn/pointio/numpyio"
	"github.com/geoknn/geoknn/stream"
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

// TestWriteBenchInput writes $GEOKNN_BENCH_PARQUET (and
// $GEOKNN_BENCH_NPY, if set) with 2^24 points (run alone, before the
// benchmarks).
func TestWriteBenchInput(t *testing.T) {
	path := os.Getenv("GEOKNN_BENCH_PARQUET")
	if path == "" {
		t.Skip("GEOKNN_BENCH_PARQUET names no file to write")
	}
	copyTo := func(tmp, path string) {
		data, err := os.ReadFile(tmp)
		if err == nil {
			err = os.WriteFile(path, data, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	copyTo(writePointsFile(t, "in.parquet", 1<<24), path)
	if npy := os.Getenv("GEOKNN_BENCH_NPY"); npy != "" {
		copyTo(writePointsFile(t, "in.npy", 1<<24), npy)
	}
}

// Parquet points to Parquet answers with the cheap query: today's path
// (read whole, answer whole, write whole) beside the pipeline's, with the
// peak heap in use of each (nearly all live: peakHeap collects often).
// With $GEOKNN_BENCH_RSS set the collector runs as in the command, and
// /usr/bin/time -v on one of them alone gives the process's peak RSS.
func BenchmarkParquetToParquet(b *testing.B) { benchParquetTo(b, pointio.FormatParquet) }

// BenchmarkParquetToCSV is BenchmarkParquetToParquet writing CSV.
func BenchmarkParquetToCSV(b *testing.B) { benchParquetTo(b, pointio.FormatCSV) }

func benchParquetTo(b *testing.B, format string) {
	in := benchInput(b)
	out := filepath.Join(b.TempDir(), "out."+format)
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
			if format == pointio.FormatCSV {
				err = csvio.WriteResults(w, len(lat), answer)
			} else {
				err = arrowio.WriteResults(w, format, len(lat), answer)
			}
			if err != nil {
				b.Fatal(err)
			}
		},
		"stream": func(w *bufio.Writer) { streamAnswers(b, in, format, w) },
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

// cheapK answers k nearest for a chunk, a function of each point.
func cheapK(k int) Query[[]uint32] {
	return func(_ context.Context, c stream.Chunk, scratch *[]uint32) (stream.Answers, error) {
		idx := append((*scratch)[:0], make([]uint32, c.Len())...)
		for i := range idx {
			idx[i], _ = cheapAnswer(c.Lat[i], c.Lon[i])
		}
		*scratch = idx
		return stream.Answers{N: c.Len(), KRow: func(i, r int) (uint32, float64, bool) {
			_, m := cheapAnswer(c.Lat[i], c.Lon[i])
			return idx[i] + uint32(r), m + float64(r), true
		}}, nil
	}
}

// .npy points to 4 nearest as .npz: today's path (N x 4 answers held,
// written whole) beside the pipeline's (the first array straight in, the
// second through a temporary file). $GEOKNN_BENCH_NPY names the input
// (TestWriteBenchInput writes 2^24 points there), else 2^22 made here.
func BenchmarkNPYToKNPZ(b *testing.B) {
	in := os.Getenv("GEOKNN_BENCH_NPY")
	if in == "" {
		in = writePointsFile(b, "bench.npy", 1<<22)
	}
	out, dir := filepath.Join(b.TempDir(), "out.npz"), b.TempDir()
	const k = 4
	paths := map[string]func(w *bufio.Writer) error{
		"whole": func(w *bufio.Writer) error {
			lat, lon, _, err := formats.ReadFileRadians(context.Background(), in, pointio.ReadOptions{})
			if err != nil {
				return err
			}
			idx, metres := make([]uint32, k*len(lat)), make([]float64, k*len(lat)) // a KResult's N x K
			for i := range lat {
				ref, m := cheapAnswer(lat[i], lon[i])
				for r := range k {
					idx[i*k+r], metres[i*k+r] = ref+uint32(r), m+float64(r)
				}
			}
			return numpyio.WriteKResultsNPZ(w, len(lat), k, func(i, r int) (uint32, float64, bool) { return idx[i*k+r], metres[i*k+r], true })
		},
		"stream": func(w *bufio.Writer) error {
			r, err := formats.OpenChunks(context.Background(), in, pointio.ReadOptions{}, 0)
			if err != nil {
				return err
			}
			defer r.Close()
			aw, err := numpyio.NewNPZAnswerWriter(w, stream.KindKNearest, k, int(r.Rows()), dir)
			if err != nil {
				return err
			}
			if _, err := Stream(context.Background(), 3, r, aw, cheapK(k)); err != nil {
				aw.Abort()
				return err
			}
			return aw.Close()
		},
	}
	for _, name := range []string{"whole", "stream"} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if err := pointio.WriteAtomic(out, paths[name]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// In place: each array written at its offset in the output file.
	b.Run("stream-in-place", func(b *testing.B) {
		for b.Loop() {
			err := pointio.WriteAt(context.Background(), out, nil, func(f *os.File) error {
				r, err := formats.OpenChunks(context.Background(), in, pointio.ReadOptions{}, 0)
				if err != nil {
					return err
				}
				defer r.Close()
				aw, err := numpyio.NewNPZAnswerWriterAt(f, stream.KindKNearest, k, int(r.Rows()), dir)
				if err != nil {
					return err
				}
				if _, err := Stream(context.Background(), 3, r, aw, cheapK(k)); err != nil {
					aw.Abort()
					return err
				}
				return aw.Close()
			}, nil)
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
