package arrowio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/internal/readertest"
	"github.com/geoknn/geoknn/stream"
)

// readChunks reads every chunk of path, checking that they follow on.
func readChunks(t *testing.T, path string, opts pointio.ReadOptions) (lat, lon []float64, ids []string, err error) {
	t.Helper()
	r, err := OpenChunks(context.Background(), path, opts, 100)
	if err != nil {
		return nil, nil, nil, err
	}
	defer r.Close()
	var c stream.Chunk
	for {
		if c, err = r.Next(context.Background(), c); err == io.EOF {
			return lat, lon, ids, nil
		}
		if err != nil {
			return lat, lon, ids, err
		}
		if c.Base != int64(len(lat)) {
			t.Fatalf("%s: chunk at %d after %d rows", path, c.Base, len(lat))
		}
		lat, lon, ids = append(lat, c.Lat...), append(lon, c.Lon...), append(ids, c.IDs...)
	}
}

// checkAsWhole wants path's chunks to be ReadFileRadians's columns, ids
// and error.
func checkAsWhole(t *testing.T, path string, opts pointio.ReadOptions) {
	t.Helper()
	wantLat, wantLon, wantIDs, wantErr := ReadFileRadians(context.Background(), path, opts)
	lat, lon, ids, err := readChunks(t, path, opts)
	if fmt.Sprint(err) != fmt.Sprint(wantErr) {
		t.Fatalf("%s: chunks: %v; whole: %v", path, err, wantErr)
	}
	bits := func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }
	if wantErr == nil && (!slices.EqualFunc(lat, wantLat, bits) || !slices.EqualFunc(lon, wantLon, bits) || !slices.Equal(ids, wantIDs)) {
		t.Fatalf("%s: %d chunked points, %d ids; want %d, %d", path, len(lat), len(ids), len(wantLat), len(wantIDs))
	}
}

// testColumns is n points with ids, row bad (if any) at latitude 95.
func testColumns(n, bad int) map[string]arrow.Array {
	lat, lon, id := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range lat {
		lat[i], lon[i], id[i] = float64(i%179)-89, float64(i%359)-179, float64(7*i)
	}
	if bad >= 0 {
		lat[bad] = 95
	}
	return map[string]arrow.Array{"lat": floats64(lat), "lon": floats64(lon), "id": floats64(id)}
}

func TestParquetChunksAsWhole(t *testing.T) {
	ids := pointio.ReadOptions{IDColumn: "id"}
	for _, groups := range []int64{1, 7, 300, 5000} {
		checkAsWhole(t, writeTestParquet(t, "p.parquet", nil, groups, testColumns(2000, -1)), ids)
	}
	checkAsWhole(t, writeTestParquet(t, "bad.parquet", nil, 300, testColumns(2000, 1500)), pointio.ReadOptions{})
	for _, name := range []string{"airports_pyarrow_f32.parquet", "airports_pyarrow_native.parquet", "airports_pyarrow_wkb.parquet", "airports_pyarrow.feather"} {
		checkAsWhole(t, filepath.Join("testdata", name), pointio.ReadOptions{})
	}
}

// A bad row in a late row group is the error, after the groups before it
// and none after.
func TestParquetChunksStopAtError(t *testing.T) {
	path := writeTestParquet(t, "late.parquet", nil, 100, testColumns(5000, 4321))
	lat, _, _, err := readChunks(t, path, pointio.ReadOptions{})
	var ie *pointio.InputError
	if !errors.As(err, &ie) || ie.Row != 4322 || len(lat) != 4300 {
		t.Fatalf("%v after %d rows; want row 4322 after 4300", err, len(lat))
	}
}

func TestIPCChunksAsWhole(t *testing.T) {
	cols := testColumns(5000, -1)
	schema := arrow.NewSchema([]arrow.Field{{Name: "lat", Type: arrow.PrimitiveTypes.Float64}, {Name: "lon", Type: arrow.PrimitiveTypes.Float64}, {Name: "id", Type: arrow.PrimitiveTypes.Float64}}, nil)
	dir := t.TempDir()
	for _, stream := range []bool{false, true} {
		var buf bytes.Buffer
		var w interface {
			Write(arrow.RecordBatch) error
			Close() error
		}
		w = ipc.NewWriter(&buf, ipc.WithSchema(schema))
		if !stream {
			w, _ = ipc.NewFileWriter(&buf, ipc.WithSchema(schema))
		}
		for lo := int64(0); lo < 5000; lo += 999 {
			hi := min(5000, lo+999)
			rec := array.NewRecordBatch(schema, []arrow.Array{array.NewSlice(cols["lat"], lo, hi), array.NewSlice(cols["lon"], lo, hi), array.NewSlice(cols["id"], lo, hi)}, hi-lo)
			w.Write(rec)
		}
		w.Close()
		path := filepath.Join(dir, fmt.Sprintf("p%v.arrow", stream))
		os.WriteFile(path, buf.Bytes(), 0o644)
		checkAsWhole(t, path, pointio.ReadOptions{IDColumn: "id"})
	}
}

// A rank's rows [lo, hi) come as the whole file's rows [lo, hi), their
// Base counting in the whole file, for Parquet (groups skipped); package
// formats checks the other formats.
func TestChunksRange(t *testing.T) {
	files := []string{
		writeTestParquet(t, "r.parquet", nil, 300, testColumns(2000, -1)),
	}
	for _, path := range files {
		wantLat, _, _, err := ReadFileRadians(context.Background(), path, pointio.ReadOptions{})
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

// A file of one big row group is read in batches: the same points, ids,
// errors and ranges.
func TestParquetBigGroupInBatches(t *testing.T) {
	defer func(g, b int64) { bigGroupRows, batchRows = g, b }(bigGroupRows, batchRows)
	bigGroupRows, batchRows = 1000, 700
	path := writeTestParquet(t, "big.parquet", nil, 5000, testColumns(5000, -1))
	if r, _ := OpenChunks(context.Background(), path, pointio.ReadOptions{}, 0); r != nil {
		if _, ok := r.(*parquetBatches); !ok {
			t.Fatalf("a group of 5000 rows read as %T", r)
		}
		r.Close()
	}
	checkAsWhole(t, path, pointio.ReadOptions{IDColumn: "id"})
	checkAsWhole(t, writeTestParquet(t, "bigbad.parquet", nil, 5000, testColumns(5000, 3333)), pointio.ReadOptions{})
	wantLat, _, _, _ := ReadFileRadians(context.Background(), path, pointio.ReadOptions{})
	r, err := OpenChunksRange(context.Background(), path, pointio.ReadOptions{}, 0, 1234, 4321)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var lat []float64
	var c stream.Chunk
	for {
		if c, err = r.Next(context.Background(), c); err != nil {
			break
		}
		lat = append(lat, c.Lat...)
	}
	if err != io.EOF || !slices.Equal(lat, wantLat[1234:4321]) {
		t.Errorf("rows [1234, 4321) in batches: %d rows, %v", len(lat), err)
	}
}

// Row groups gathered into chunks of every size, with ids, and ranges that
// cut groups: each group is decoded into its place in its chunk.
func TestParquetChunksGathered(t *testing.T) {
	path := writeTestParquet(t, "g.parquet", nil, 97, testColumns(2000, -1))
	opts := pointio.ReadOptions{IDColumn: "id"}
	wantLat, wantLon, wantIDs, err := ReadFileRadians(context.Background(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, rows := range []int{1, 97, 98, 500, 1 << 20} {
		for _, rg := range [][2]int64{{0, 2000}, {3, 1999}, {96, 98}, {1000, 1300}} {
			r, err := OpenChunksRange(context.Background(), path, opts, rows, rg[0], rg[1])
			if err != nil {
				t.Fatal(err)
			}
			var lat, lon []float64
			var ids []string
			var slots [3]stream.Chunk
			for k := 0; ; k++ {
				c, err := r.Next(context.Background(), slots[k%3])
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if c.Base != rg[0]+int64(len(lat)) {
					t.Fatalf("chunks of %d, rows %v: a chunk at %d after %d rows", rows, rg, c.Base, len(lat))
				}
				slots[k%3] = c
				lat, lon, ids = append(lat, c.Lat...), append(lon, c.Lon...), append(ids, c.IDs...)
			}
			r.Close()
			lo, hi := rg[0], rg[1]
			if !slices.Equal(lat, wantLat[lo:hi]) || !slices.Equal(lon, wantLon[lo:hi]) || !slices.Equal(ids, wantIDs[lo:hi]) {
				t.Errorf("chunks of %d, rows %v: %d rows differ from the whole file's", rows, rg, len(lat))
			}
		}
	}
}

// A stream stopped while its chunks are read returns the context's error
// from then on, not a later chunk.
func TestParquetChunksStopped(t *testing.T) {
	path := writeTestParquet(t, "s.parquet", nil, 50, testColumns(2000, -1))
	ctx, cancel := context.WithCancel(context.Background())
	r, err := OpenChunks(ctx, path, pointio.ReadOptions{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Next(ctx, stream.Chunk{}); err != nil {
		t.Fatal(err)
	}
	cancel()
	for range 3 {
		if _, err := r.Next(ctx, stream.Chunk{}); !errors.Is(err, context.Canceled) {
			t.Fatalf("after the context was cancelled: %v", err)
		}
	}
}

// A Parquet reader reads its first chunks before the first Next (knn run
// opens its input while the engine starts): chunksAhead+startSlots of
// them, no more until Next hands slots back.
func TestParquetChunksReadAtStart(t *testing.T) {
	path := writeTestParquet(t, "start.parquet", nil, 50, testColumns(2000, -1))
	r, err := OpenChunks(context.Background(), path, pointio.ReadOptions{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := r.(*parquetChunks)
	want := chunksAhead + startSlots
	for deadline := time.Now().Add(10 * time.Second); len(p.ready) < want && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	if got := len(p.ready); got != want {
		t.Fatalf("%d chunks under way before the first Next, want %d", got, want)
	}
	for range startSlots {
		if _, err := r.Next(context.Background(), stream.Chunk{}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(20 * time.Millisecond)
	if got := len(p.ready); got != chunksAhead {
		t.Fatalf("%d chunks under way after %d calls that bring no columns back, want %d", got, startSlots, chunksAhead)
	}
}

// A Parquet file's first chunks are an eighth, a quarter and a half of
// the chunk size (pointio.RampedRows), whole groups each, so that a
// stream's first answers come after a group's decoding.
func TestParquetChunksRamp(t *testing.T) {
	path := writeTestParquet(t, "p.parquet", nil, 100, testColumns(5000, -1))
	r, err := OpenChunks(context.Background(), path, pointio.ReadOptions{}, 800)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{100, 200, 400, 800, 800, 800, 800, 800, 300}
	if got := readertest.ChunkLens(t, r); !slices.Equal(got, want) {
		t.Fatalf("chunks %v, want %v", got, want)
	}
}

// Closing a Parquet reader lets go of the chunks it read ahead.
func TestParquetChunksCloseDrops(t *testing.T) {
	path := writeTestParquet(t, "p.parquet", nil, 100, testColumns(5000, -1))
	r, err := OpenChunks(context.Background(), path, pointio.ReadOptions{}, 800)
	if err != nil {
		t.Fatal(err)
	}
	p := r.(*parquetChunks)
	if _, err := p.Next(context.Background(), stream.Chunk{}); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if len(p.ready) != 0 || len(p.free) != 0 {
		t.Fatalf("closed reader holds %d chunks read ahead and %d handed back", len(p.ready), len(p.free))
	}
	if _, err := p.Next(context.Background(), stream.Chunk{}); err == nil {
		t.Fatal("a closed reader read on")
	}
}
