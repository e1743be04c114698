package arrowio

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// Issue #41 C3: every single-byte flip (four patterns a byte) of a small
// Arrow IPC file and stream gives points or an error naming the file,
// from the whole-file and the streamed reader alike: never a panic, a Go
// runtime message, a 64 GB allocation (a vtable of odd size the verifier
// read differently from flatbuffers), or fewer points and exit 0.
func TestArrowSmallByteFlips(t *testing.T) {
	lat, lon := floats64([]float64{1, 2}), floats64([]float64{3, 4})
	schema := arrow.NewSchema([]arrow.Field{{Name: "lat", Type: lat.DataType()}, {Name: "lon", Type: lon.DataType()}}, nil)
	path := filepath.Join(t.TempDir(), "flipped.arrow")
	for _, stream := range []bool{false, true} {
		var buf bytes.Buffer
		rec := array.NewRecordBatch(schema, []arrow.Array{lat, lon}, 2)
		if stream {
			w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
			w.Write(rec)
			w.Close()
		} else {
			w, _ := ipc.NewFileWriter(&buf, ipc.WithSchema(schema))
			w.Write(rec)
			w.Close()
		}
		seed := buf.Bytes()
		for i := range seed {
			for _, x := range []byte{0x01, 0x10, 0x80, 0xff} {
				b := append([]byte(nil), seed...)
				b[i] ^= x
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
				pts, err := ReadFile(context.Background(), path)
				checkResult(t, pts, err)
				checkStreamAgrees(t, path, pts, err)
				if t.Failed() {
					t.Fatalf("stream %v, byte %d ^ %#x", stream, i, x)
				}
			}
		}
	}
}
