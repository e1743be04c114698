package formats

import (
	"context"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/geoknn/geoknn/pointio"
)

func BenchmarkReadFileCities(b *testing.B) {
	path, _ := realData(b, "cities.csv")
	for b.Loop() {
		if _, err := ReadFile(path); err != nil {
			b.Fatal(err)
		}
	}
}

// pipeCSV is about mb MiB of CSV points, as a pipe would carry them.
func pipeCSV(mb int) []byte {
	var b []byte
	b = append(b, "lat,lon\n"...)
	for i := 0; len(b) < mb<<20; i++ {
		b = fmt.Appendf(b, "%.6f,%.6f\n", float64(i%180000)/1000-90, float64(i%360000)/1000-180)
	}
	return b
}

// feedStdin makes standard input a pipe fed body by a goroutine, until
// the benchmark ends.
func feedStdin(b *testing.B, body []byte) {
	r, w, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	stdin := os.Stdin
	os.Stdin = r
	go func() {
		w.Write(body)
		w.Close()
	}()
	b.Cleanup(func() { os.Stdin = stdin; r.Close() })
}

// The pipe path (standard input, read by content) of 64 MiB of CSV,
// whole and in chunks.
func BenchmarkReadPipeCSV(b *testing.B) {
	body := pipeCSV(64)
	b.Run("whole", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			feedStdin(b, body)
			if _, _, err := ReadPoints(context.Background(), "-", pointio.ReadOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("chunks", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			feedStdin(b, body)
			if _, err := readChunks("-"); err != io.EOF {
				b.Fatal(err)
			}
		}
	})
}
