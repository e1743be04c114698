package arrowio

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/stream"
)

// 2^22 points as pyarrow writes them by default (Snappy, a dictionary
// that falls back to PLAIN once its page reaches 1 MiB, row groups of
// 2^20) read in chunks of 2^21 through arrow-go's reader and through the
// page reader, every row checked and in radians; cpu-ns/row is the
// process's CPU time (both cores of the machine's two) a row.
//
// Measured on the 2-core shared machine (go1.26, -benchtime 5x, -count 3):
// arrow-go 23.1-25.0 cpu-ns/row, pages 5.6-6.4 cpu-ns/row.
func BenchmarkParquetCoordPages(b *testing.B) {
	const n = 1 << 22
	path := filepath.Join(b.TempDir(), "points.parquet")
	writeBenchPoints(b, path, n, 1<<20)
	for _, way := range []string{"arrow-go", "pages"} {
		b.Run(way, func(b *testing.B) {
			cpu := processCPU()
			for b.Loop() {
				if rows, err := countChunks(path, 1<<21, way == "pages"); err != nil || rows != n {
					b.Fatalf("%d rows, %v", rows, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/row")
			b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/float64(b.N)/n, "cpu-ns/row")
		})
	}
}

// countChunks reads path in chunks, three slots going round as a stream's
// do, with the page reader on or off: the rows read.
func countChunks(path string, chunkRows int, pages bool) (int, error) {
	defer func(on bool) { coordPagesOn = on }(coordPagesOn)
	coordPagesOn = pages
	ctx := context.Background()
	r, err := OpenChunks(ctx, path, pointio.ReadOptions{}, chunkRows)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	var slots [3]stream.Chunk
	rows := 0
	for k := 0; ; k++ {
		c, err := r.Next(ctx, slots[k%3])
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		slots[k%3] = c
		rows += c.Len()
	}
}
