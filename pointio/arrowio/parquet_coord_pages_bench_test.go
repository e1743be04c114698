package arrowio

import (
	"context"
	"encoding/binary"
	"io"
	"math"
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
// Measured on the 2-core shared machine (go1.26.8, -benchtime 5x, -count
// 3, twice): arrow-go 26.0-40.3 cpu-ns/row, pages 13.4-15.3; each
// iteration makes a stream's five chunks' columns anew (40 bytes a row
// zeroed), which a long stream makes once.
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

// One row group of 2^20 such points decoded into radian columns on one
// core, again and again into the same columns: the reader alone, no
// chunk columns made (BenchmarkParquetCoordPages makes a stream's).
//
// Measured as above (-benchtime 20x, -count 3): arrow-go 23.3-30.3
// cpu-ns/row, pages 12.3-13.7, of which Snappy's decoding is about 60%
// and the pread of the column chunks 15%: the rest of arrow-go's time
// (builder copies, dictionary growth, levels one by one, the table and
// radiansOf's second pass) is gone.
func BenchmarkParquetCoordGroup(b *testing.B) {
	const n = 1 << 20
	path := filepath.Join(b.TempDir(), "points.parquet")
	writeBenchPoints(b, path, n, n)
	lat, lon := make([]float64, n), make([]float64, n)
	for _, way := range []string{"arrow-go", "pages"} {
		b.Run(way, func(b *testing.B) {
			defer func(on bool) { coordPagesOn = on }(coordPagesOn)
			coordPagesOn = way == "pages"
			rdr, fr, err := openParquetArrow(path, 1<<16)
			if err != nil {
				b.Fatal(err)
			}
			defer rdr.Close()
			src, err := parquetSourceOf(path, rdr, pointio.ReadOptions{})
			if err != nil {
				b.Fatal(err)
			}
			var s groupScratch
			if s.pages = src.newCoordPages(rdr, fr); s.pages != nil {
				defer s.pages.Close()
			}
			cpu := processCPU()
			for b.Loop() {
				if err := src.readGroupRadians(context.Background(), fr, 0, 0, lat, lon, nil, &s); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/row")
			b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/float64(b.N)/n, "cpu-ns/row")
		})
	}
}

// The degrees-to-radians loops alone, over a page of 2^16 PLAIN doubles
// and floats, as a plain page (plainRadians) and as a dictionary
// (dictRadians).
func BenchmarkCoordRadians(b *testing.B) {
	const n = 1 << 16
	d64, d32 := make([]byte, 8*n), make([]byte, 4*n)
	for i := range n {
		v := float64(i%180) - 89.5
		binary.LittleEndian.PutUint64(d64[8*i:], math.Float64bits(v))
		binary.LittleEndian.PutUint32(d32[4*i:], math.Float32bits(float32(v)))
	}
	dst := make([]float64, n)
	for _, tc := range []struct {
		name string
		data []byte
		c    coordColumn
	}{{"double", d64, coordColumn{limit: 90}}, {"float", d32, coordColumn{limit: 90, float: true}}} {
		b.Run("plain-"+tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.data)))
			for b.Loop() {
				if !plainRadians(tc.data, tc.c, dst) {
					b.Fatal("out of range")
				}
			}
		})
		b.Run("dict-"+tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.data)))
			for b.Loop() {
				if !dictRadians(tc.data, tc.c, dst) {
					b.Fatal("out of range")
				}
			}
		})
	}
}
