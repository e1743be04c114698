package numpyio

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/stream"
)

// An .npz member with one flipped data byte fails its CRC-32 and is
// refused by the whole-file and the streamed reader, as NumPy refuses it
// ("Bad CRC-32 for file 'lat.npy'"), instead of answering a different
// point (#41 F5).
func TestNPZBadCRC(t *testing.T) {
	const n = 20
	f64 := func(name string, v func(i int) float64) NPZColumn {
		return NPZColumn{name, "<f8", 8, func(b []byte, i int) { binary.LittleEndian.PutUint64(b, math.Float64bits(v(i))) }}
	}
	var buf bytes.Buffer
	err := WriteNPZ(&buf, n, []NPZColumn{
		f64("lat", func(i int) float64 { return 10 + float64(i) }),
		f64("lon", func(i int) float64 { return 20 }),
	})
	if err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	at := bytes.Index(b, binary.LittleEndian.AppendUint64(nil, math.Float64bits(19)))
	if at < 0 {
		t.Fatal("no latitude 19 in the archive")
	}
	b[at] ^= 1 // row 9's latitude, a valid coordinate still
	path := filepath.Join(t.TempDir(), "flipped.npz")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readFile(path); err == nil || !strings.Contains(err.Error(), "bad CRC-32") {
		t.Errorf("ReadFile: err = %v, want bad CRC-32", err)
	}
	ctx := context.Background()
	r, err := openChunks(ctx, path, pointio.ReadOptions{}, 4)
	if err == nil {
		defer r.Close()
		for err == nil {
			_, err = r.Next(ctx, stream.Chunk{})
		}
	}
	if err == nil || err == io.EOF || !strings.Contains(err.Error(), "bad CRC-32") {
		t.Errorf("streamed: err = %v, want bad CRC-32", err)
	}
}
