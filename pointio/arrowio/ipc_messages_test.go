package arrowio

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// IPCStreamMessages splits a stream into its schema and batches, their
// bodies slices of the stream (arrow-go reads the same values from
// them), and refuses a stream cut inside a message.
func TestIPCStreamMessages(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "lat", Type: arrow.PrimitiveTypes.Float64}}, nil)
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	for batch := range 2 {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		b.Field(0).(*array.Float64Builder).AppendValues([]float64{float64(batch), 1.5, -2}, nil)
		rec := b.NewRecordBatch()
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		b.Release()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	msgs, err := IPCStreamMessages(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 || len(msgs[0].Body) != 0 || len(msgs[1].Body) == 0 {
		t.Fatalf("%d messages", len(msgs))
	}
	for _, m := range msgs[1:] {
		if &m.Body[0] != &data[cap(data[:0])-cap(m.Body)] {
			t.Fatal("a body is not a slice of the stream")
		}
	}
	for _, cut := range []int{len(data) - 20, 6, 12} {
		if _, err := IPCStreamMessages(data[:cut]); err == nil {
			t.Errorf("a stream cut at %d of %d split", cut, len(data))
		}
	}
}
