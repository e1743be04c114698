package arrowio

import (
	"bytes"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/stream"
)

// The one-table builds the answer writers replaced, kept as the reference
// the parallel writer is checked against byte for byte (a table built in
// one pass, batches of the writer's size, arrow-go's own writers).

// refResults writes n nearest-reference answers in format
// (pointio.FormatParquet or pointio.FormatArrow) as the columns obs_index
// (int64), ref_index (uint32) and distance_m (float64), one row an
// observation.
// answer is called from several goroutines at once.
func refResults(w io.Writer, format string, n int, answer func(i int) (uint32, float64)) error {
	fields := []arrow.Field{obsIndexField, refIndexField, metresField}
	return writeFixed(w, format, fields, n, func(cols [][]byte, lo, hi int) {
		obs, ref, m := view[int64](cols[0]), view[uint32](cols[1]), view[float64](cols[2])
		for i := lo; i < hi; i++ {
			obs[i-lo] = int64(i)
			ref[i-lo], m[i-lo] = answer(i)
		}
	})
}

// refKResults writes the k nearest references of n observations in
// format as rows obs_index, rank (1 to k), ref_index, distance_m, nearest first,
// one row an answer found.
func refKResults(w io.Writer, format string, n, k int, row stream.KRow) error {
	fields := []arrow.Field{obsIndexField, {Name: "rank", Type: arrow.PrimitiveTypes.Int32}, refIndexField, metresField}
	return writeTable(w, format, fields, n, GroupItems(stream.KindKNearest, k), func(bs []array.Builder, i int) {
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

// refWithin writes a radius query's answer in format: rows obs_index, count
// when in.Ref is nil, else one row obs_index, ref_index, distance_m a
// reference found, nearest first.
func refWithin(w io.Writer, format string, n int, in stream.Within) error {
	if in.Ref == nil {
		fields := []arrow.Field{obsIndexField, {Name: "count", Type: arrow.PrimitiveTypes.Uint32}}
		return writeTable(w, format, fields, n, parquetGroupItems, func(bs []array.Builder, i int) {
			bs[0].(*array.Int64Builder).Append(int64(i))
			bs[1].(*array.Uint32Builder).Append(uint32(in.Count(i)))
		})
	}
	fields := []arrow.Field{obsIndexField, refIndexField, metresField}
	return writeTable(w, format, fields, n, parquetGroupItems, func(bs []array.Builder, i int) {
		for r := range in.Count(i) {
			ref, m := in.Ref(i, r)
			bs[0].(*array.Int64Builder).Append(int64(i))
			bs[1].(*array.Uint32Builder).Append(ref)
			bs[2].(*array.Float64Builder).Append(m)
		}
	})
}

// The whole-answer writers give the reference's bytes for no
// observations too, in every format and kind.
func TestWholeAnswersEmptyAsReference(t *testing.T) {
	counts := stream.Within{Count: func(int) int { return 0 }}
	type write func(w io.Writer, format string) error
	for name, pair := range map[string][2]write{
		"nearest": {
			func(w io.Writer, f string) error { return WriteResults(w, f, 0, nil) },
			func(w io.Writer, f string) error { return refResults(w, f, 0, nil) }},
		"k nearest": {
			func(w io.Writer, f string) error { return WriteKResults(w, f, 0, 3, nil) },
			func(w io.Writer, f string) error { return refKResults(w, f, 0, 3, nil) }},
		"counts": {
			func(w io.Writer, f string) error { return WriteWithin(w, f, 0, counts) },
			func(w io.Writer, f string) error { return refWithin(w, f, 0, counts) }},
	} {
		for _, format := range []string{pointio.FormatParquet, pointio.FormatArrow} {
			var got, want bytes.Buffer
			if err := pair[0](&got, format); err != nil {
				t.Fatalf("%s %s: %v", format, name, err)
			}
			if err := pair[1](&want, format); err != nil {
				t.Fatalf("%s %s reference: %v", format, name, err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("%s %s: %d bytes, the reference %d", format, name, got.Len(), want.Len())
			}
		}
	}
}
