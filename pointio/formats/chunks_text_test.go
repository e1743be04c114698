package formats

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/numpyio"
	"github.com/geoknn/geoknn/stream"
)

// readAllChunks reads every chunk of r, checking that they follow on.
func readAllChunks(t *testing.T, r stream.ChunkReader) (lat, lon []float64, ids []string, err error) {
	t.Helper()
	defer r.Close()
	var c stream.Chunk
	for {
		c, err = r.Next(context.Background(), c)
		if err == io.EOF {
			return lat, lon, ids, nil
		}
		if err != nil {
			return lat, lon, ids, err
		}
		if c.Base != int64(len(lat)) {
			t.Fatalf("chunk base %d after %d rows", c.Base, len(lat))
		}
		lat, lon, ids = append(lat, c.Lat...), append(lon, c.Lon...), append(ids, c.IDs...)
	}
}

// sameBits reports whether a and b hold the same float64 bits.
func sameBits(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

// checkChunksAsWhole reads path in chunks and whole and wants the same
// columns, ids and error.
func checkChunksAsWhole(t *testing.T, path string, opts pointio.ReadOptions, rows int) {
	t.Helper()
	wantLat, wantLon, wantIDs, wantErr := ReadFileRadians(context.Background(), path, opts)
	r, err := OpenChunks(context.Background(), path, opts, rows)
	var lat, lon []float64
	var ids []string
	if err == nil {
		lat, lon, ids, err = readAllChunks(t, r)
	}
	if fmt.Sprint(err) != fmt.Sprint(wantErr) {
		t.Fatalf("%s: chunks: error %v, whole file: %v", path, err, wantErr)
	}
	if wantErr != nil {
		return
	}
	if !sameBits(lat, wantLat) || !sameBits(lon, wantLon) || !slices.Equal(ids, wantIDs) {
		t.Fatalf("%s: %d chunked points (%d ids) differ from the whole file's %d (%d ids)", path, len(lat), len(ids), len(wantLat), len(wantIDs))
	}
}

func TestChunksAsWholeRealData(t *testing.T) {
	for _, name := range []string{"cities.csv", "airports.csv"} {
		path := filepath.Join("..", "..", "testdata", "realdata", name)
		for _, rows := range []int{1, 777, 1 << 20} {
			checkChunksAsWhole(t, path, pointio.ReadOptions{}, rows)
		}
		checkChunksAsWhole(t, path, pointio.ReadOptions{IDColumn: "name"}, 1000)
	}
	for _, name := range []string{"airports_numpy_f32.npy", "airports_numpy_f64.npy", "airports_numpy.npz", "points.geojson", "quoted.csv", "bom.csv", "bad_lat.csv"} {
		checkChunksAsWhole(t, filepath.Join(testdata, name), pointio.ReadOptions{}, 100)
	}
}

// bigCSV writes n rows, row bad (0-based, -1: none) with latitude 91, to
// a CSV file (gzip-compressed for a .gz name).
func bigCSV(t *testing.T, name string, n, bad int) string {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("id,lat,lon\n")
	for i := range n {
		lat := float64(i%17999)/100 - 89.99
		if i == bad {
			lat = 91
		}
		fmt.Fprintf(&b, "p%d,%g,%g\n", i, lat, float64(i%35999)/100-179.99)
	}
	data := b.Bytes()
	if filepath.Ext(name) == ".gz" {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(data)
		zw.Close()
		data = z.Bytes()
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestChunksAsWholeLargeCSV(t *testing.T) {
	for _, name := range []string{"big.csv", "big.csv.gz"} {
		checkChunksAsWhole(t, bigCSV(t, name, 300_000, -1), pointio.ReadOptions{IDColumn: "id"}, 65536)
		// A bad row blocks later: its line in the whole file, as read whole.
		checkChunksAsWhole(t, bigCSV(t, name, 300_000, 250_000), pointio.ReadOptions{}, 10_000)
	}
}

// An error far into the input comes after the chunks before it, and no
// chunk holds a row past it.
func TestChunksStopAtError(t *testing.T) {
	path := bigCSV(t, "late.csv", 300_000, 250_000)
	r, err := OpenChunks(context.Background(), path, pointio.ReadOptions{}, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	lat, _, _, err := readAllChunks(t, r)
	var ie *pointio.InputError
	if !errors.As(err, &ie) || ie.Line != 250_002 {
		t.Fatalf("error %v, want an pointio.InputError on line 250002", err)
	}
	if len(lat) == 0 || len(lat) > 250_000 {
		t.Fatalf("%d rows before the error on row 250000", len(lat))
	}
}

func TestNPYChunksFromStream(t *testing.T) {
	path := filepath.Join(testdata, "airports_numpy_f64.npy")
	wantLat, wantLon, _, err := ReadFileRadians(context.Background(), path, pointio.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := numpyio.OpenNPYChunks(f, "-", false, 1000)
	if err != nil {
		t.Fatal(err)
	}
	lat, lon, _, err := readAllChunks(t, r)
	if err != nil || !sameBits(lat, wantLat) || !sameBits(lon, wantLon) {
		t.Fatalf("stream: %d points, %v; want the file's %d", len(lat), err, len(wantLat))
	}
}

// Closing a reader early stops its goroutine (the race detector and the
// leak would tell).
func TestTextChunksCloseEarly(t *testing.T) {
	r, err := OpenChunks(context.Background(), bigCSV(t, "close.csv", 200_000, -1), pointio.ReadOptions{}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(context.Background(), stream.Chunk{}); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if _, err := r.Next(context.Background(), stream.Chunk{}); err == nil {
		t.Fatal("Next after Close: no error")
	}
}

// A CSV row with more fields than the header, deep in a file read in
// chunks, is refused with its line by the streamed reader too (#41).
func TestStreamCSVLongRow(t *testing.T) {
	var b strings.Builder
	b.WriteString("lat,lon\n")
	for i := range 5000 {
		if i == 4321 {
			b.WriteString("10,20,30\n")
			continue
		}
		b.WriteString("1.5,2.5\n")
	}
	path := filepath.Join(t.TempDir(), "long.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := OpenChunks(ctx, path, pointio.ReadOptions{}, 100)
	if err == nil {
		defer r.Close()
		for err == nil {
			_, err = r.Next(ctx, stream.Chunk{})
		}
	}
	if err == nil || err == io.EOF || !strings.Contains(err.Error(), "long.csv:4323: long row: 3 field(s)") {
		t.Errorf("streamed: err = %v, want long row at line 4323", err)
	}
}
