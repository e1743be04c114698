package arrowio

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/geoknn/geoknn/pointio"
)

// writeSnappyPoints writes n random points as a Snappy Parquet file of
// plain pages (about 1 MB each), as pandas and knn write them.
func writeSnappyPoints(t *testing.T, n int) string {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	lat, lon := make([]float64, n), make([]float64, n)
	for i := range lat {
		lat[i], lon[i] = r.Float64()*180-90, r.Float64()*360-180
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "lat", Type: arrow.PrimitiveTypes.Float64}, {Name: "lon", Type: arrow.PrimitiveTypes.Float64}}, nil)
	path := filepath.Join(t.TempDir(), "snappy.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDictionaryDefault(false))
	fw, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(array.NewRecordBatch(schema, []arrow.Array{floats64(lat), floats64(lon)}, int64(n))); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// dataPages are the offsets of the file's column chunks' first pages.
func dataPages(t *testing.T, path string) []int64 {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	var at []int64
	for g := range rdr.NumRowGroups() {
		for c := range 2 {
			cc, _ := rdr.MetaData().RowGroup(g).ColumnChunk(c)
			at = append(at, cc.DataPageOffset())
		}
	}
	return at
}

// A bit flipped in a Snappy page's header can claim a page of tens of
// megabytes in a file of four (#41 C2 saw 8.8 GB asked for): every
// buffer of the Parquet readers comes from a capped allocator, and a
// refused one is an error naming the file, its row group and the figures,
// from the whole-file and the streamed reader alike, never a panic or an
// allocation the file could not need.
func TestParquetFlippedPageHeaderCapped(t *testing.T) {
	path := writeSnappyPoints(t, 1<<18)
	seed, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	flip := filepath.Join(t.TempDir(), "flipped.parquet")
	refused, last := 0, error(nil)
	for _, page := range dataPages(t, path) {
		for i := page; i < page+24 && i < int64(len(seed)); i++ {
			b := append([]byte(nil), seed...)
			b[i] ^= 0x40
			if err := os.WriteFile(flip, b, 0o644); err != nil {
				t.Fatal(err)
			}
			pts, err := ReadFile(context.Background(), flip)
			checkResult(t, pts, err)
			_, _, _, cerr := readChunks(t, flip, pointio.ReadOptions{})
			if (err == nil) != (cerr == nil) {
				t.Fatalf("byte %d: whole file %v, streamed %v", i, err, cerr)
			}
			for _, e := range []error{err, cerr} {
				if e != nil && strings.Contains(e.Error(), "runtime error") {
					t.Fatalf("byte %d: %v", i, e)
				}
				if e != nil && strings.Contains(e.Error(), "bytes claimed") {
					refused, last = refused+1, e
					if !strings.Contains(e.Error(), flip) || !strings.Contains(e.Error(), "row group 0") {
						t.Errorf("byte %d: %v names neither the file nor the row group", i, e)
					}
				}
			}
		}
	}
	if refused == 0 {
		t.Error("no flip claimed a buffer beyond the cap: the test no longer reaches it")
	}
	t.Logf("%d refusals; last: %v", refused, last)
}

// A buffer refused because memory cannot hold it is not called corrupt;
// one beyond what the file could need is.
func TestAllocRefusedReasons(t *testing.T) {
	if r := corruptReason("Parquet", allocRefused{size: 10 << 30, limit: 1 << 30, memory: true}); strings.Contains(r, "corrupt") || !strings.Contains(r, "memory available") {
		t.Errorf("memory: %q", r)
	}
	if r := corruptReason("Parquet", allocRefused{size: 10 << 30, limit: 1 << 30}); !strings.Contains(r, "corrupt Parquet file: a buffer of 10737418240 bytes") {
		t.Errorf("file: %q", r)
	}
	if a := capped(1 << 62); a.limit > 1<<40 {
		t.Errorf("cap %d above 1 TiB", a.limit)
	}
}
