package arrowio

import (
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// RowsWriter writes WriteRows's table a chunk of items at a time: the
// answers that carry identifiers (--obs-id, --ref-id), byte for byte as
// WriteRows writes them all at once.
type RowsWriter struct {
	ordered
	schema *arrow.Schema
	b      *array.RecordBuilder
	items  int // in the batch being built
}

// NewRowsWriter writes rows of fields (int64, int32, uint32, float64 or
// string values, in order) in format (pointio.FormatParquet or
// pointio.FormatArrow), batches of parquetGroupItems items encoded side
// by side and written in order.
func NewRowsWriter(w io.Writer, format string, fields []arrow.Field, opts StreamOptions) (*RowsWriter, error) {
	schema := arrow.NewSchema(fields, nil)
	o, err := newOrdered(w, format, schema, opts, parquetGroupItems*64)
	if err != nil {
		return nil, err
	}
	return &RowsWriter{ordered: o, schema: schema, b: array.NewRecordBuilder(memory.DefaultAllocator, schema)}, nil
}

// Write adds the rows rows(j, add) adds for each of n items (j from 0),
// following those of the last chunk. The values are copied: the caller's
// buffers are free when Write returns.
func (r *RowsWriter) Write(n int, rows func(j int, add func(vals ...any))) error {
	if r.err != nil {
		return r.err
	}
	bs := r.b.Fields()
	for j := range n {
		rows(j, func(vals ...any) { appendValues(bs, vals) })
		r.items++
		if r.items == parquetGroupItems {
			if err := r.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// flush has the batch built so far encoded.
func (r *RowsWriter) flush() error {
	rec := r.b.NewRecordBatch()
	r.items = 0
	return r.dispatch(r.take(0, 1), func() arrow.RecordBatch { return rec })
}

// Close encodes the last batch and writes the batches in flight and the
// footer.
func (r *RowsWriter) Close() error {
	defer r.b.Release()
	if r.items > 0 {
		if err := r.flush(); err != nil {
			r.Abort()
			return err
		}
	}
	return r.finish()
}
