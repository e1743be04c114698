package arrowio

import (
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/geoknn/geoknn/pointio"
	"github.com/paulmach/orb"
)

// Outputs are written in batches (Parquet row groups, Arrow record
// batches) of parquetGroupItems observations (more rows where an
// observation has several); Parquet is Snappy compressed, as pandas and
// pyarrow write it by default.
const parquetGroupItems = 1 << 20

var (
	obsIndexField = arrow.Field{Name: "obs_index", Type: arrow.PrimitiveTypes.Int64}
	refIndexField = arrow.Field{Name: "ref_index", Type: arrow.PrimitiveTypes.Uint32}
	metresField   = arrow.Field{Name: "distance_m", Type: arrow.PrimitiveTypes.Float64}
)

// WriteResults writes n nearest-reference answers in format
// (pointio.FormatParquet or pointio.FormatArrow) as the columns obs_index
// (int64), ref_index (uint32) and distance_m (float64), one row an
// observation.
func WriteResults(w io.Writer, format string, n int, answer func(i int) (uint32, float64)) error {
	fields := []arrow.Field{obsIndexField, refIndexField, metresField}
	return writeTable(w, format, fields, n, func(bs []array.Builder, i int) {
		ref, m := answer(i)
		bs[0].(*array.Int64Builder).Append(int64(i))
		bs[1].(*array.Uint32Builder).Append(ref)
		bs[2].(*array.Float64Builder).Append(m)
	})
}

// WriteKResults writes the k nearest references of n observations in
// format as rows obs_index, rank (1 to k), ref_index, distance_m, nearest first,
// one row an answer found.
func WriteKResults(w io.Writer, format string, n, k int, row pointio.KRow) error {
	fields := []arrow.Field{obsIndexField, {Name: "rank", Type: arrow.PrimitiveTypes.Int32}, refIndexField, metresField}
	return writeTable(w, format, fields, n, func(bs []array.Builder, i int) {
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

// WriteWithin writes a radius query's answer in format: rows obs_index, count
// when in.Ref is nil, else one row obs_index, ref_index, distance_m a
// reference found, nearest first.
func WriteWithin(w io.Writer, format string, n int, in pointio.Within) error {
	if in.Ref == nil {
		fields := []arrow.Field{obsIndexField, {Name: "count", Type: arrow.PrimitiveTypes.Uint32}}
		return writeTable(w, format, fields, n, func(bs []array.Builder, i int) {
			bs[0].(*array.Int64Builder).Append(int64(i))
			bs[1].(*array.Uint32Builder).Append(uint32(in.Count(i)))
		})
	}
	fields := []arrow.Field{obsIndexField, refIndexField, metresField}
	return writeTable(w, format, fields, n, func(bs []array.Builder, i int) {
		for r := range in.Count(i) {
			ref, m := in.Ref(i, r)
			bs[0].(*array.Int64Builder).Append(int64(i))
			bs[1].(*array.Uint32Builder).Append(ref)
			bs[2].(*array.Float64Builder).Append(m)
		}
	})
}

// tableSink takes an output's record batches: a Parquet or an Arrow IPC
// file writer.
type tableSink interface {
	Write(rec arrow.RecordBatch) error
	Close() error
}

func newSink(w io.Writer, format string, schema *arrow.Schema) (tableSink, error) {
	switch format {
	case pointio.FormatParquet:
		props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy),
			parquet.WithMaxRowGroupLength(1<<62))
		return pqarrow.NewFileWriter(schema, w, props, pqarrow.DefaultWriterProps())
	case pointio.FormatArrow:
		return ipc.NewFileWriter(w, ipc.WithSchema(schema))
	}
	return nil, fmt.Errorf("arrowio writes %s or %s, not %q", pointio.FormatParquet, pointio.FormatArrow, format)
}

// writeTable writes the rows that item appends for each of n items, a
// batch every parquetGroupItems items.
func writeTable(w io.Writer, format string, fields []arrow.Field, n int, item func(bs []array.Builder, i int)) error {
	schema := arrow.NewSchema(fields, nil)
	sink, err := newSink(w, format, schema)
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
		err := sink.Write(rec)
		rec.Release()
		if err != nil {
			sink.Close()
			return fmt.Errorf("write results: %w", err)
		}
	}
	if err := sink.Close(); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}

// WritePoints writes points in format (pointio.FormatParquet or
// pointio.FormatArrow) as two double columns of degrees, lat and lon.
func WritePoints(w io.Writer, format string, pts []orb.Point) error {
	fields := []arrow.Field{{Name: "lat", Type: arrow.PrimitiveTypes.Float64}, {Name: "lon", Type: arrow.PrimitiveTypes.Float64}}
	return writeTable(w, format, fields, len(pts), func(bs []array.Builder, i int) {
		bs[0].(*array.Float64Builder).Append(pts[i].Lat())
		bs[1].(*array.Float64Builder).Append(pts[i].Lon())
	})
}

// WriteRows writes the rows that rows(i, add) adds for each of n items in
// format (pointio.FormatParquet or pointio.FormatArrow), the columns
// fields describe (int64, int32, uint32, float64 or string values, in
// order): the general writer behind answers that carry identifiers.
func WriteRows(w io.Writer, format string, fields []arrow.Field, n int, rows func(i int, add func(vals ...any))) error {
	return writeTable(w, format, fields, n, func(bs []array.Builder, i int) {
		rows(i, func(vals ...any) {
			for k, v := range vals {
				switch b := bs[k].(type) {
				case *array.Int64Builder:
					b.Append(v.(int64))
				case *array.Int32Builder:
					b.Append(v.(int32))
				case *array.Uint32Builder:
					b.Append(v.(uint32))
				case *array.Float64Builder:
					b.Append(v.(float64))
				case *array.StringBuilder:
					b.Append(v.(string))
				}
			}
		})
	})
}
