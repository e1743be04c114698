package parquetio

import (
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/geoknn/geoknn/pointio"
)

// Parquet outputs are written in row groups of parquetGroupItems
// observations (more rows where an observation has several), Snappy
// compressed, as pandas and pyarrow write them by default.
const parquetGroupItems = 1 << 20

var (
	obsIndexField = arrow.Field{Name: "obs_index", Type: arrow.PrimitiveTypes.Int64}
	refIndexField = arrow.Field{Name: "ref_index", Type: arrow.PrimitiveTypes.Uint32}
	metresField   = arrow.Field{Name: "distance_m", Type: arrow.PrimitiveTypes.Float64}
)

// WriteResults writes n nearest-reference answers as a Parquet file
// of the columns obs_index (int64), ref_index (uint32) and distance_m
// (float64), one row an observation.
func WriteResults(w io.Writer, n int, answer func(i int) (uint32, float64)) error {
	fields := []arrow.Field{obsIndexField, refIndexField, metresField}
	return writeParquet(w, fields, n, func(bs []array.Builder, i int) {
		ref, m := answer(i)
		bs[0].(*array.Int64Builder).Append(int64(i))
		bs[1].(*array.Uint32Builder).Append(ref)
		bs[2].(*array.Float64Builder).Append(m)
	})
}

// WriteKResults writes the k nearest references of n observations
// as rows obs_index, rank (1 to k), ref_index, distance_m, nearest first,
// one row an answer found.
func WriteKResults(w io.Writer, n, k int, row pointio.KRow) error {
	fields := []arrow.Field{obsIndexField, {Name: "rank", Type: arrow.PrimitiveTypes.Int32}, refIndexField, metresField}
	return writeParquet(w, fields, n, func(bs []array.Builder, i int) {
		for r := range k {
			ref, m, ok := row(i, r)
			if !ok {
				return
			}
			bs[0].(*array.Int64Builder).Append(int64(i))
			bs[1].(*array.Int32Builder).Append(int32(r + 1))
			bs[2].(*array.Uint32Builder).Append(ref)
			bs[3].(*array.Float64Builder).Append(m)
		}
	})
}

// WriteWithin writes a radius query's answer: rows obs_index, count
// when in.Ref is nil, else one row obs_index, ref_index, distance_m a
// reference found, nearest first.
func WriteWithin(w io.Writer, n int, in pointio.Within) error {
	if in.Ref == nil {
		fields := []arrow.Field{obsIndexField, {Name: "count", Type: arrow.PrimitiveTypes.Uint32}}
		return writeParquet(w, fields, n, func(bs []array.Builder, i int) {
			bs[0].(*array.Int64Builder).Append(int64(i))
			bs[1].(*array.Uint32Builder).Append(uint32(in.Count(i)))
		})
	}
	fields := []arrow.Field{obsIndexField, refIndexField, metresField}
	return writeParquet(w, fields, n, func(bs []array.Builder, i int) {
		for r := range in.Count(i) {
			ref, m := in.Ref(i, r)
			bs[0].(*array.Int64Builder).Append(int64(i))
			bs[1].(*array.Uint32Builder).Append(ref)
			bs[2].(*array.Float64Builder).Append(m)
		}
	})
}

// writeParquet writes the rows that item appends for each of n items, a
// row group every parquetGroupItems items.
func writeParquet(w io.Writer, fields []arrow.Field, n int, item func(bs []array.Builder, i int)) error {
	schema := arrow.NewSchema(fields, nil)
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithMaxRowGroupLength(1<<62))
	fw, err := pqarrow.NewFileWriter(schema, w, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for lo := 0; lo < n; lo += parquetGroupItems {
		for i := lo; i < min(n, lo+parquetGroupItems); i++ {
			item(b.Fields(), i)
		}
		rec := b.NewRecordBatch()
		err := fw.Write(rec)
		rec.Release()
		if err != nil {
			fw.Close()
			return fmt.Errorf("write results: %w", err)
		}
	}
	if err := fw.Close(); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}
