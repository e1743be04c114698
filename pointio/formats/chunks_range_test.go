package formats

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/stream"
)

// Standard input's formats: streamed or spooled, the same points as the
// file, read whole (ReadPoints) or in chunks (OpenChunks), and no
// temporary file left.
func TestStdinChunks(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir) // where the copies go
	for _, path := range []string{
		filepath.Join("..", "arrowio", "testdata", "airports_pyarrow_native.parquet"),
		filepath.Join("..", "arrowio", "testdata", "airports_pyarrow.feather"),
		filepath.Join(testdata, "airports_numpy_f64.npy"),
		filepath.Join(testdata, "airports_numpy.npz"),
		filepath.Join("..", "..", "testdata", "realdata", "cities.csv"),
	} {
		wantLat, _, _, err := ReadRadians(context.Background(), path, pointio.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		withStdin(t, path)
		lat, err := readChunks("-")
		if err != io.EOF || !slices.Equal(lat, wantLat) {
			t.Errorf("%s from a stream: %d points, %v; want %d", path, len(lat), err, len(wantLat))
		}
		withStdin(t, path)
		pts, _, err := ReadPoints(context.Background(), "-", pointio.ReadOptions{})
		if err != nil || len(pts) != len(wantLat) {
			t.Errorf("%s from a stream, whole: %d points, %v; want %d", path, len(pts), err, len(wantLat))
		}
	}
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// withStdin makes the file at path standard input until the test ends.
func withStdin(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	stdin := os.Stdin
	os.Stdin = f
	t.Cleanup(func() { os.Stdin = stdin; f.Close() })
}

// readChunks reads path's latitudes through OpenChunks, and the error
// that ended the reading (io.EOF when all went well).
func readChunks(path string) ([]float64, error) {
	r, err := OpenChunks(context.Background(), path, pointio.ReadOptions{}, 500)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var lat []float64
	var c stream.Chunk
	for {
		if c, err = r.Next(context.Background(), c); err != nil {
			return lat, err
		}
		lat = append(lat, c.Lat...)
	}
}

// A rank's rows [lo, hi) come as the whole file's rows [lo, hi), their
// Base counting in the whole file, for Parquet (groups skipped), .npy
// (seek) and CSV (cut).
func TestChunksRange(t *testing.T) {
	files := []string{
		filepath.Join("..", "arrowio", "testdata", "airports_pyarrow_native.parquet"),
		filepath.Join(testdata, "airports_numpy_f64.npy"),
		filepath.Join("..", "..", "testdata", "realdata", "cities.csv"),
	}
	for _, path := range files {
		wantLat, _, _, err := ReadRadians(context.Background(), path, pointio.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n := int64(len(wantLat))
		for _, rg := range [][2]int64{{0, n}, {250, 700}, {299, 301}, {n - 1, n}, {5, 5}} {
			r, err := OpenChunksRange(context.Background(), path, pointio.ReadOptions{}, 64, rg[0], rg[1])
			if err != nil {
				t.Fatalf("%s %v: %v", path, rg, err)
			}
			var lat []float64
			var c stream.Chunk
			for {
				if c, err = r.Next(context.Background(), c); err != nil {
					break
				}
				if c.Base != rg[0]+int64(len(lat)) || c.Len() == 0 {
					t.Fatalf("%s %v: a chunk at %d after %d rows", path, rg, c.Base, len(lat))
				}
				lat = append(lat, c.Lat...)
			}
			r.Close()
			if err != io.EOF || !slices.Equal(lat, wantLat[rg[0]:rg[1]]) {
				t.Errorf("%s rows %v: %d rows, %v", path, rg, len(lat), err)
			}
		}
	}
}
