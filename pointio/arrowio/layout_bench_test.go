package arrowio

import (
	"bytes"
	"io"
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

// The k-nearest answers of one row group (2^20 observations, k = 8) in
// the long layout the writers use (a row an answer: obs_index, rank,
// ref_index, distance_m) and in a wide one (a row an observation:
// obs_index, then ref_index and distance_m as lists of k), each encoded
// with the writers' settings: whether a --layout wide would write faster.
func BenchmarkKLayout(b *testing.B) {
	const n, k = 1 << 20, 8
	long := func() arrow.RecordBatch {
		schema := arrow.NewSchema([]arrow.Field{obsIndexField, {Name: "rank", Type: arrow.PrimitiveTypes.Int32},
			{Name: "ref_index", Type: arrow.PrimitiveTypes.Uint32}, metresField}, nil)
		obs, rank := make([]int64, n*k), make([]int32, n*k)
		ref, dist := make([]uint32, n*k), make([]float64, n*k)
		for e := range obs {
			obs[e], rank[e], ref[e], dist[e] = int64(e/k), int32(e%k+1), uint32(e*2654435761>>12), float64(e%100003)*1.37
		}
		return columnsBatch(schema, n*k, asBytes(obs), asBytes(rank), asBytes(ref), asBytes(dist))
	}
	wide := func() arrow.RecordBatch {
		schema := arrow.NewSchema([]arrow.Field{obsIndexField,
			{Name: "ref_index", Type: arrow.FixedSizeListOf(k, arrow.PrimitiveTypes.Uint32)},
			{Name: "distance_m", Type: arrow.FixedSizeListOf(k, arrow.PrimitiveTypes.Float64)}}, nil)
		bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		defer bld.Release()
		ob := bld.Field(0).(*array.Int64Builder)
		rb, db := bld.Field(1).(*array.FixedSizeListBuilder), bld.Field(2).(*array.FixedSizeListBuilder)
		rv, dv := rb.ValueBuilder().(*array.Uint32Builder), db.ValueBuilder().(*array.Float64Builder)
		for i := range n {
			ob.Append(int64(i))
			rb.Append(true)
			db.Append(true)
			for r := range k {
				e := i*k + r
				rv.Append(uint32(e * 2654435761 >> 12))
				dv.Append(float64(e%100003) * 1.37)
			}
		}
		return bld.NewRecordBatch()
	}
	for _, tc := range []struct {
		name string
		rec  arrow.RecordBatch
	}{{"long", long()}, {"wide", wide()}} {
		b.Run(tc.name, func(b *testing.B) {
			var buf bytes.Buffer
			for b.Loop() {
				buf.Reset()
				props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy),
					parquet.WithMaxRowGroupLength(1<<62), parquet.WithDictionaryDefault(false),
					parquet.WithEncodingFor(obsIndexField.Name, parquet.Encodings.DeltaBinaryPacked),
					parquet.WithCompressionFor(metresField.Name, compress.Codecs.Uncompressed))
				w, err := pqarrow.NewFileWriter(tc.rec.Schema(), &buf, props, pqarrow.DefaultWriterProps())
				if err != nil {
					b.Fatal(err)
				}
				if err := w.Write(tc.rec); err != nil {
					b.Fatal(err)
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(buf.Len())/float64(n), "bytes/obs")
		})
	}
}

// The k-nearest answer writer on one group of 2^20 observations x k = 8,
// answers read through KRow as a stream hands them: what each of the
// writer's workers spends a group (BenchmarkKLayout/long is pqarrow's
// encoding alone).
func BenchmarkKAnswerWriter(b *testing.B) {
	const n, k = 1 << 20, 8
	a := stream.Answers{N: n, KRow: func(i, r int) (uint32, float64, bool) {
		e := i*k + r
		return uint32(e * 2654435761 >> 12), float64(e%100003) * 1.37, true
	}}
	for b.Loop() {
		w, err := NewAnswerWriter(io.Discard, pointio.FormatParquet, stream.KindKNearest, k, StreamOptions{Workers: 1})
		if err != nil {
			b.Fatal(err)
		}
		if err := w.Write(a); err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
