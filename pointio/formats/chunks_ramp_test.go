package formats

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/csvio"
	"github.com/geoknn/geoknn/pointio/internal/readertest"
	"github.com/geoknn/geoknn/pointio/numpyio"
)

// A .npy or CSV input's first chunks are an eighth, a quarter and a half
// of the chunk size (pointio.RampedRows), so that a stream's first
// answers wait for a small read; the points are the whole file's.
func TestChunksRamp(t *testing.T) {
	pts := readertest.GridPoints(5000)
	dir := t.TempDir()
	write := map[string]func(*os.File) error{
		"p.npy": func(f *os.File) error { return numpyio.WritePointsNPY(f, pts) },
		"p.csv": func(f *os.File) error {
			w := bufio.NewWriter(f)
			if err := csvio.WritePoints(w, pts); err != nil {
				return err
			}
			return w.Flush()
		},
	}
	want := []int{100, 200, 400, 800, 800, 800, 800, 800, 300}
	for name, fn := range write {
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err == nil {
			err = fn(f)
			f.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
		r, err := OpenChunks(context.Background(), path, pointio.ReadOptions{}, 800)
		if err != nil {
			t.Fatal(err)
		}
		if got := readertest.ChunkLens(t, r); !slices.Equal(got, want) {
			t.Errorf("%s: chunks %v, want %v", name, got, want)
		}
		checkChunksAsWhole(t, path, pointio.ReadOptions{}, 800)
	}
}
