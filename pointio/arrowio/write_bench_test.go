package arrowio

import (
	"io"
	"math"
	"testing"

	"github.com/geoknn/geoknn/pointio"
)

// 2^22 answers (random reference indices and distances, as a query's)
// written to Parquet and Arrow.
func BenchmarkWriteResults(b *testing.B) {
	const n = 1 << 22
	ref, metres := make([]uint32, n), make([]float64, n)
	for i := range n {
		ref[i], metres[i] = uint32(i*2654435761)>>16, math.Sqrt(float64(uint32(i*2654435761)))*1.37
	}
	answer := func(i int) (uint32, float64) { return ref[i], metres[i] }
	for _, format := range []string{pointio.FormatParquet, pointio.FormatArrow} {
		b.Run(format, func(b *testing.B) {
			for b.Loop() {
				if err := WriteResults(io.Discard, format, n, answer); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
