package arrowio

import (
	"io"
	"sync"
	"sync/atomic"

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
	// The batches in flight are bounded by the memory budget over a
	// built group's bytes, known once one is built: a row group of k
	// nearest with identifiers holds k rows an item and its strings,
	// far above the estimate the window starts from.
	budget, most int
	groupBytes   atomic.Int64 // the largest built group's, twice
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
	return &RowsWriter{ordered: o, schema: schema, b: array.NewRecordBuilder(memory.DefaultAllocator, schema),
		budget: memoryBudget(opts), most: o.workers}, nil
}

// window sets the batches in flight from the largest group built yet.
func (r *RowsWriter) window() {
	if g := r.groupBytes.Load(); g > 0 {
		r.workers = max(1, min(r.most, int(int64(r.budget)/g)))
	}
}

// built notes rec's bytes (twice: a builder grows by doubling) and
// returns rec. (arrow-go's util.TotalRecordSize sums the same buffers,
// but its package brings protobuf reflection and another module.)
func (r *RowsWriter) built(rec arrow.RecordBatch) arrow.RecordBatch {
	n := int64(0)
	for _, c := range rec.Columns() {
		for _, b := range c.Data().Buffers() {
			if b != nil {
				n += int64(b.Len())
			}
		}
	}
	for n *= 2; ; {
		old := r.groupBytes.Load()
		if n <= old || r.groupBytes.CompareAndSwap(old, n) {
			return rec
		}
	}
}

// Write adds the rows rows(j, add) adds for each of n items (j from 0),
// following those of the last chunk. Building rows boxes and appends
// every value (about 390 ns a row a core for --ref-id answers, more than
// encoding them), so a row group the chunk holds whole is built by the
// goroutine that encodes it: rows is called from several goroutines at
// once (once an item). The group a chunk leaves open is built here. The
// values are copied: the caller's buffers are free when Write returns.
func (r *RowsWriter) Write(n int, rows func(j int, add func(vals ...any))) error {
	if r.err != nil {
		return r.err
	}
	j := 0
	if r.items > 0 { // the group the last chunk left open
		j = r.append(0, min(n, parquetGroupItems-r.items), rows)
		if r.items == parquetGroupItems {
			if err := r.flush(); err != nil {
				return err
			}
		}
	}
	var built sync.WaitGroup
	defer built.Wait() // rows is not called once Write returns
	for ; n-j >= parquetGroupItems; j += parquetGroupItems {
		r.window()
		built.Add(1)
		lo := j
		err := r.dispatch(r.take(0, 1), func() arrow.RecordBatch {
			defer built.Done()
			return r.built(r.build(lo, lo+parquetGroupItems, rows))
		})
		if err != nil {
			built.Done() // not started
			return err
		}
	}
	r.append(j, n, rows)
	return nil
}

// append adds the rows of items lo to hi to the open group and returns hi.
func (r *RowsWriter) append(lo, hi int, rows func(j int, add func(vals ...any))) int {
	addRows(r.b, lo, hi, rows)
	r.items += hi - lo
	return hi
}

// build is the batch of the rows of items lo to hi, in a builder of its
// own.
func (r *RowsWriter) build(lo, hi int, rows func(j int, add func(vals ...any))) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, r.schema)
	defer b.Release()
	addRows(b, lo, hi, rows)
	return b.NewRecordBatch()
}

// addRows appends the rows of items lo to hi to b.
func addRows(b *array.RecordBuilder, lo, hi int, rows func(j int, add func(vals ...any))) {
	bs := b.Fields()
	add := func(vals ...any) { appendValues(bs, vals) }
	for j := lo; j < hi; j++ {
		rows(j, add)
	}
}

// flush has the batch built so far encoded.
func (r *RowsWriter) flush() error {
	rec := r.built(r.b.NewRecordBatch())
	r.window()
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
