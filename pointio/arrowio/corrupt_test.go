package arrowio

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/internal/readertest"
)

// A row group whose num_rows (999) is not its columns' value count (1000)
// is refused as corrupt, naming the row group, rather than read with a row
// silently dropped.
func TestParquetRowGroupRowsMismatch(t *testing.T) {
	pts := readertest.GridPoints(1000)
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	if err := WritePoints(w, pointio.FormatParquet, pts); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	b := buf.Bytes()
	// The row group's num_rows is the footer's last i64 field 3 (thrift
	// compact header 0x16) of zigzag 2000 (0xd0 0x0f); 999 has the same
	// length (0xce 0x0f).
	at := bytes.LastIndex(b, []byte{0x16, 0xd0, 0x0f})
	if at < 0 {
		t.Fatal("no num_rows 1000 in the footer")
	}
	b[at+1] = 0xce
	path := filepath.Join(t.TempDir(), "patched.parquet")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := ReadFileIDs(context.Background(), path, pointio.ReadOptions{})
	if err == nil || !strings.Contains(err.Error(), "corrupt Parquet file: row group 0") {
		t.Errorf("ReadFileIDs: err = %v, want corrupt naming row group 0", err)
	}
	_, _, _, err = ReadFileRadians(context.Background(), path, pointio.ReadOptions{})
	if err == nil || !strings.Contains(err.Error(), "corrupt Parquet file: row group 0") {
		t.Errorf("ReadFileRadians: err = %v, want corrupt naming row group 0", err)
	}
}

// An Arrow batch whose length (7183) is not its field nodes' (7184) is
// refused as corrupt, naming the batch.
func TestArrowBatchLengthMismatch(t *testing.T) {
	mem := memory.DefaultAllocator
	schema := arrow.NewSchema([]arrow.Field{{Name: "lat", Type: arrow.PrimitiveTypes.Float64}, {Name: "lon", Type: arrow.PrimitiveTypes.Float64}}, nil)
	var cols []arrow.Array
	for range 2 {
		bld := array.NewFloat64Builder(mem)
		for i := range 7184 {
			bld.Append(float64(i % 80))
		}
		cols = append(cols, bld.NewArray())
	}
	path := filepath.Join(t.TempDir(), "short.arrow")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	fw, err := ipc.NewFileWriter(f, ipc.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	good := array.NewRecordBatch(schema, cols, 7184)
	bad := array.NewRecordBatch(schema, cols, 7183)
	for _, rec := range []arrow.RecordBatch{good, bad} {
		if err := fw.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, _, err = ReadFileIDs(context.Background(), path, pointio.ReadOptions{})
	if err == nil || !strings.Contains(err.Error(), "corrupt Arrow IPC file: batch 1 has length 7183") {
		t.Fatalf("err = %v, want corrupt naming batch 1", err)
	}
	if strings.Contains(err.Error(), "runtime error") || strings.Contains(err.Error(), "Parquet") {
		t.Errorf("err = %v names the runtime or Parquet", err)
	}
	// The streamed reader (knn run) refuses it too, not a short read (#41 F2).
	if n, err := readStreamed(path); err == nil || !strings.Contains(err.Error(), "batch 1 has length 7183") {
		t.Errorf("streamed: %d rows, err = %v, want corrupt naming batch 1", n, err)
	}
}
