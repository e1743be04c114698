package arrowio

import (
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/stream"
)

// writeBenchPoints writes n points spread over the sphere as pyarrow
// writes a table by default: float64 lat and lon, Snappy, dictionary
// tried, row groups of groupRows.
func writeBenchPoints(tb testing.TB, path string, n, groupRows int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	schema := arrow.NewSchema([]arrow.Field{{Name: "lat", Type: arrow.PrimitiveTypes.Float64}, {Name: "lon", Type: arrow.PrimitiveTypes.Float64}}, nil)
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithMaxRowGroupLength(int64(groupRows)))
	w, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.DefaultWriterProps())
	if err != nil {
		tb.Fatal(err)
	}
	for lo := 0; lo < n; lo += groupRows {
		m := min(groupRows, n-lo)
		lat, lon := array.NewFloat64Builder(memory.DefaultAllocator), array.NewFloat64Builder(memory.DefaultAllocator)
		for i := lo; i < lo+m; i++ {
			u := float64(uint32(i*2654435761)) / (1 << 32)
			lat.Append(math.Asin(2*u-1) * 180 / math.Pi)
			lon.Append(float64(uint32(i*40503+12345)%360000)/1000 - 180)
		}
		rec := array.NewRecordBatch(schema, []arrow.Array{lat.NewArray(), lon.NewArray()}, int64(m))
		if err := w.WriteBuffered(rec); err != nil {
			tb.Fatal(err)
		}
		rec.Release()
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
}

// 2^24 points in row groups of 2^20 (pyarrow's default) read in chunks of
// 2^22, three chunks going round as a stream's slots do, every row through
// the checks and the radians.
func BenchmarkParquetChunks(b *testing.B) {
	const n = 1 << 24
	path := filepath.Join(b.TempDir(), "points.parquet")
	writeBenchPoints(b, path, n, 1<<20)
	ctx := context.Background()
	for b.Loop() {
		r, err := OpenChunks(ctx, path, pointio.ReadOptions{}, 1<<22)
		if err != nil {
			b.Fatal(err)
		}
		var slots [3]stream.Chunk
		rows := 0
		for k := 0; ; k++ {
			c, err := r.Next(ctx, slots[k%3])
			slots[k%3] = c
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			rows += c.Len()
		}
		r.Close()
		if rows != n {
			b.Fatalf("%d rows of %d", rows, n)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
