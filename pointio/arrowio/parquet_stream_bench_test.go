package arrowio

import (
	"io"
	"math"
	"testing"

	"github.com/geoknn/geoknn/pointio"
)

// benchAnswers is n nearest answers as a query's: random references and
// distances.
func benchAnswers(n int) ([]uint32, []float64) {
	ref, metres := make([]uint32, n), make([]float64, n)
	for i := range n {
		ref[i], metres[i] = uint32(i*2654435761)>>16, math.Sqrt(float64(uint32(i*2654435761)))*1.37
	}
	return ref, metres
}

// A 2^24-row nearest answer table to Parquet: today's writer (one core
// encodes) beside the stream writer (row groups encoded side by side),
// given the answers in chunks of 2^20.
func BenchmarkParquetAnswers(b *testing.B) {
	const n = 1 << 24
	ref, metres := benchAnswers(n)
	b.Run("whole", func(b *testing.B) {
		for b.Loop() {
			if err := WriteResults(io.Discard, pointio.FormatParquet, n, func(i int) (uint32, float64) { return ref[i], metres[i] }); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("stream", func(b *testing.B) {
		for b.Loop() {
			w, err := NewAnswerWriter(io.Discard, pointio.FormatParquet, pointio.KindNearest, 1, StreamOptions{})
			if err != nil {
				b.Fatal(err)
			}
			for lo := 0; lo < n; lo += 1 << 20 {
				a := pointio.Answers{Base: lo, N: 1 << 20, Nearest: func(i int) (uint32, float64) { return ref[lo+i], metres[lo+i] }}
				if err := w.Write(a); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
}
