package arrowio

import (
	"fmt"
	"io"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/geoknn/geoknn/internal/parallel"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/stream"
	"github.com/paulmach/orb"
)

// Outputs are written in batches (Parquet row groups, Arrow record
// batches) of parquetGroupItems observations (more rows where an
// observation has several); Parquet columns are encoded as answerProps
// says. Groups of 2^19 rows are encoded sixteen at once in the memory
// eight groups of 2^20 held: a group's three columns are encoded side by
// side and no faster, so more groups give more of a host's cores work
// (with eight of 2^20, about 10 of 32 cores were busy writing 2^27
// answers on 2 x H200; the two sizes were not timed side by side).
// Readers still get large groups (DuckDB writes 122,880 rows a group).
var parquetGroupItems = 1 << 19

// parquetGroupEntries bounds a streamed batch of radius lists by its
// entries as well (about 100 MB of them encoded): 2^20 observations of a
// huge radius's lists hold billions (#41 C4).
var parquetGroupEntries = 1 << 22

// parquetPageBytes is the values' bytes after which a data page ends
// (arrow-go's default; the tests make it small to have many pages).
var parquetPageBytes = 1 << 20

var (
	obsIndexField = arrow.Field{Name: "obs_index", Type: arrow.PrimitiveTypes.Int64}
	refIndexField = arrow.Field{Name: "ref_index", Type: arrow.PrimitiveTypes.Uint32}
	metresField   = arrow.Field{Name: "distance_m", Type: arrow.PrimitiveTypes.Float64}
)

// WriteResults writes n nearest-reference answers in format
// (pointio.FormatParquet or pointio.FormatArrow) as the columns obs_index
// (int64), ref_index (uint32) and distance_m (float64), one row an
// observation.
// answer is called from several goroutines at once.
func WriteResults(w io.Writer, format string, n int, answer func(i int) (uint32, float64)) error {
	return writeAnswers(w, format, stream.KindNearest, 1, stream.Answers{N: n, Nearest: answer})
}

// WriteKResults writes the k nearest references of n observations in
// format as rows obs_index, rank (1 to k), ref_index, distance_m, nearest first,
// one row an answer found.
func WriteKResults(w io.Writer, format string, n, k int, row stream.KRow) error {
	return writeAnswers(w, format, stream.KindKNearest, k, stream.Answers{N: n, KRow: row})
}

// WriteWithin writes a radius query's answer in format: rows obs_index, count
// when in.Ref is nil, else one row obs_index, ref_index, distance_m a
// reference found, nearest first.
func WriteWithin(w io.Writer, format string, n int, in stream.Within) error {
	kind := stream.KindWithinLists
	if in.Ref == nil {
		kind = stream.KindWithinCounts
	}
	return writeAnswers(w, format, kind, 1, stream.Answers{N: n, Within: in})
}

// writeAnswers writes a whole answer as one chunk through the streamed
// answer writer, which encodes its row groups (or batches) on every core
// and writes them in order: the whole-answer and the streamed outputs are
// one path, the same bytes.
func writeAnswers(w io.Writer, format string, kind stream.AnswerKind, k int, a stream.Answers) error {
	aw, err := NewAnswerWriter(w, format, kind, k, StreamOptions{})
	if err != nil {
		return err
	}
	if err := aw.Write(a); err != nil {
		aw.Abort()
		return err
	}
	return aw.Close()
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
		return pqarrow.NewFileWriter(schema, w, answerProps(), pqarrow.DefaultWriterProps())
	case pointio.FormatArrow:
		return ipc.NewFileWriter(w, ipc.WithSchema(schema))
	}
	return nil, fmt.Errorf("arrowio writes %s or %s, not %q", pointio.FormatParquet, pointio.FormatArrow, format)
}

// answerProps are the Parquet writer's properties for every output.
// No dictionaries: indices and distances are nearly all distinct, and a
// dictionary tried on every page cost most of the writing time (2^22
// answers 0.69 s with, see BENCHMARKS.md). obs_index counts up, which
// delta encoding stores in a few bits a row. ref_index is delta encoded
// too: nearest-city indices of 2^24 uniform points took 2.32 bytes and
// 14.7 ns a row so, against Snappy's 2.72 bytes and 28.9 ns (pqarrow, a
// column of 2^20 rows at a time, 2-core development machine; Snappy was
// a third of all the CPU of a 2^27 Parquet -> Parquet run on 2 x H200),
// and a cluster of observations near one reference packs into a few
// bits. Distances, float64 with nearly random low bytes, are left
// uncompressed (Snappy saved little and took half the time); other
// columns (rank, count, ids) are Snappy compressed, as pandas and
// pyarrow write them by default.
func answerProps() *parquet.WriterProperties {
	return parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithMaxRowGroupLength(1<<62), parquet.WithDictionaryDefault(false),
		parquet.WithDataPageSize(int64(parquetPageBytes)),
		parquet.WithEncodingFor(obsIndexField.Name, parquet.Encodings.DeltaBinaryPacked),
		parquet.WithEncodingFor(refIndexField.Name, parquet.Encodings.DeltaBinaryPacked),
		parquet.WithCompressionFor(refIndexField.Name, compress.Codecs.Uncompressed),
		parquet.WithCompressionFor(metresField.Name, compress.Codecs.Uncompressed))
}

// writeTable writes the rows that item appends for each of n items, a
// batch every group items.
func writeTable(w io.Writer, format string, fields []arrow.Field, n, group int, item func(bs []array.Builder, i int)) error {
	schema := arrow.NewSchema(fields, nil)
	sink, err := newSink(w, format, schema)
	if err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for lo := 0; lo < n; lo += group {
		for i := lo; i < min(n, lo+group); i++ {
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
	return writeFixed(w, format, fields, len(pts), func(cols [][]byte, lo, hi int) {
		lat, lon := view[float64](cols[0]), view[float64](cols[1])
		for i := lo; i < hi; i++ {
			lat[i-lo], lon[i-lo] = pts[i].Lat(), pts[i].Lon()
		}
	})
}

// writeFixed writes n rows of fixed-width columns (fields), a batch of
// parquetGroupItems rows at a time. fill writes rows [lo, hi) into cols,
// one slice a column starting at row lo; it runs on every core, and the
// next batch is filled while the sink encodes the last one.
func writeFixed(w io.Writer, format string, fields []arrow.Field, n int, fill func(cols [][]byte, lo, hi int)) error {
	schema := arrow.NewSchema(fields, nil)
	sink, err := newSink(w, format, schema)
	if err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	batches := make(chan arrow.RecordBatch, 1)
	stop := make(chan struct{})
	go func() {
		defer close(batches)
		for lo := 0; lo < n; lo += parquetGroupItems {
			select {
			case batches <- fixedBatch(schema, lo, min(n, lo+parquetGroupItems), fill):
			case <-stop:
				return
			}
		}
	}()
	for rec := range batches {
		if err == nil {
			err = sink.Write(rec)
			if err != nil {
				close(stop)
			}
		}
		rec.Release()
	}
	if cerr := sink.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}

// fixedBatch makes the record batch of rows [lo, hi), its columns filled
// in blocks on every core.
func fixedBatch(schema *arrow.Schema, lo, hi int, fill func(cols [][]byte, lo, hi int)) arrow.RecordBatch {
	n := hi - lo
	fields := schema.Fields()
	bufs := make([][]byte, len(fields))
	for c, f := range fields {
		bufs[c] = make([]byte, n*f.Type.(arrow.FixedWidthDataType).BitWidth()/8)
	}
	parallel.Blocks(n, 1<<14, 0, func(_, a, b int) {
		cols := make([][]byte, len(bufs))
		for c, f := range fields {
			width := f.Type.(arrow.FixedWidthDataType).BitWidth() / 8
			cols[c] = bufs[c][a*width : b*width]
		}
		fill(cols, lo+a, lo+b)
	})
	return columnsBatch(schema, n, bufs...)
}

// view is b as a slice of T (b's length a multiple of T's size; Go's
// allocations are aligned for any T).
func view[T any](b []byte) []T {
	var zero T
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/int(unsafe.Sizeof(zero)))
}

// WriteRows writes the rows that rows(i, add) adds for each of n items in
// format (pointio.FormatParquet or pointio.FormatArrow), the columns
// fields describe (int64, int32, uint32, float64 or string values, in
// order): the general writer behind answers that carry identifiers.
func WriteRows(w io.Writer, format string, fields []arrow.Field, n int, rows func(i int, add func(vals ...any))) error {
	return writeTable(w, format, fields, n, parquetGroupItems, func(bs []array.Builder, i int) {
		rows(i, func(vals ...any) { appendValues(bs, vals) })
	})
}

// appendValues appends one row's values to the column builders.
func appendValues(bs []array.Builder, vals []any) {
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
}
