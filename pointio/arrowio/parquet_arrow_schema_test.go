package arrowio

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/geoknn/geoknn/pointio"
)

// schemaMessage is an IPC stream of one Schema message, built by hand as
// a flatbuffer: its body claims body bytes, and its Schema a vector of
// fields fields of which none is there.
func schemaMessage(body int64, fields uint32) []byte {
	b := make([]byte, 64)
	le := binary.LittleEndian
	le.PutUint32(b[0:], 16) // root: the Message table
	// Message vtable at 4: version 0, header_type 1, header 2, bodyLength 3.
	for i, v := range []uint16{12, 24, 4, 6, 8, 16} {
		le.PutUint16(b[4+2*i:], v)
	}
	le.PutUint32(b[16:], 12)           // the table's vtable is 12 bytes back
	le.PutUint16(b[20:], 4)            // version V5
	b[22] = 1                          // header_type Schema
	le.PutUint32(b[24:], 48-24)        // header: the Schema table at 48
	le.PutUint64(b[32:], uint64(body)) // bodyLength
	// Schema vtable at 40: endianness 0, fields 1.
	for i, v := range []uint16{8, 8, 0, 4} {
		le.PutUint16(b[40+2*i:], v)
	}
	le.PutUint32(b[48:], 8)      // the table's vtable is 8 bytes back
	le.PutUint32(b[52:], 56-52)  // fields: the vector at 56
	le.PutUint32(b[56:], fields) // its length
	head := make([]byte, 8)
	le.PutUint32(head, 0xFFFFFFFF)
	le.PutUint32(head[4:], uint32(len(b)))
	return append(head, b...)
}

// A Parquet file whose ARROW:schema entry claims a huge body or a huge
// vector of fields is refused with an error naming the file and the
// entry, by every reader, rather than handed to pqarrow, whose IPC
// reader would allocate what it claims and end the process.
func TestParquetCorruptArrowSchema(t *testing.T) {
	for name, msg := range map[string][]byte{
		"body":   schemaMessage(1<<50, 0),
		"fields": schemaMessage(0, 1<<31-1),
	} {
		t.Run(name, func(t *testing.T) {
			meta := map[string]string{arrowSchemaKey: base64.StdEncoding.EncodeToString(msg)}
			path := writeTestParquet(t, "bad.parquet", meta, 2, map[string]arrow.Array{
				"lat": floats64([]float64{1, 2, 3}), "lon": floats64([]float64{4, 5, 6})})
			pts, _, err := ReadFileIDs(context.Background(), path, pointio.ReadOptions{})
			checkResult(t, pts, err)
			wantSchemaError(t, "ReadFileIDs", path, err)
			_, _, _, err = ReadFileRadians(context.Background(), path, pointio.ReadOptions{})
			wantSchemaError(t, "ReadFileRadians", path, err)
			_, err = readStreamed(path)
			wantSchemaError(t, "OpenChunks", path, err)
			_, _, err = Columns(path)
			wantSchemaError(t, "Columns", path, err)
		})
	}
}

func wantSchemaError(t *testing.T, what, path string, err error) {
	t.Helper()
	var ie *pointio.InputError
	if err == nil || !errors.As(err, &ie) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "ARROW:schema metadata is corrupt") {
		t.Errorf("%s: err = %v, want an InputError naming %s and its ARROW:schema", what, err, path)
	}
}

// A sound ARROW:schema entry, as arrow-go writes it, is read as before.
func TestParquetArrowSchemaKept(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "lat", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "lon", Type: arrow.PrimitiveTypes.Float64, Nullable: true}}, nil)
	meta := map[string]string{arrowSchemaKey: base64.StdEncoding.EncodeToString(flight.SerializeSchema(schema, memory.DefaultAllocator))}
	path := writeTestParquet(t, "good.parquet", meta, 2, map[string]arrow.Array{
		"lat": floats64([]float64{1, 2, 3}), "lon": floats64([]float64{4, 5, 6})})
	pts, _, err := ReadFileIDs(context.Background(), path, pointio.ReadOptions{})
	if err != nil || len(pts) != 3 {
		t.Fatalf("ReadFileIDs: %d points, err = %v", len(pts), err)
	}
	if n, err := readStreamed(path); err != nil || n != 3 {
		t.Fatalf("OpenChunks: %d points, err = %v", n, err)
	}
}
