package client

import (
	"bytes"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// ArrowPoints is the Arrow IPC stream knn serve takes as the body of a
// bulk query (Content-Type application/vnd.apache.arrow.stream): one
// batch of lat and lon columns in degrees, and id when ids is not nil
// (a move's body).
func ArrowPoints(lat, lon []float64, ids []string) ([]byte, error) {
	fields := []arrow.Field{{Name: "lat", Type: arrow.PrimitiveTypes.Float64}, {Name: "lon", Type: arrow.PrimitiveTypes.Float64}}
	if ids != nil {
		fields = append(fields, arrow.Field{Name: "id", Type: arrow.BinaryTypes.String})
	}
	schema := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Float64Builder).AppendValues(lat, nil)
	b.Field(1).(*array.Float64Builder).AppendValues(lon, nil)
	if ids != nil {
		b.Field(2).(*array.StringBuilder).AppendValues(ids, nil)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	if err := w.Write(rec); err != nil {
		return nil, err
	}
	return buf.Bytes(), w.Close()
}
