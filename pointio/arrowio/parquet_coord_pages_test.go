package arrowio

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/stream"
)

// coordFile is a test file's columns: how arrow-go writes them.
type coordFile struct {
	rows, groupRows int
	float32         bool
	nullable        bool
	props           []parquet.WriterProperty
	// value is row i's latitude and longitude; null says row i's latitude
	// is null (nil: none is).
	value func(i int) (lat, lon float64)
	null  func(i int) bool
}

// coordValue is distinct values for the first rows of every 1000 and a
// few repeated ones after them, so that a dictionary both fills (falling
// back to PLAIN where its page is small) and repeats.
func coordValue(i int) (float64, float64) {
	if i%1000 >= 600 {
		i %= 37
	}
	u := float64(uint32(i*2654435761)) / (1 << 32)
	return math.Asin(2*u-1) * 180 / math.Pi, float64(uint32(i*40503+12345)%360000)/1000 - 180
}

func (cf coordFile) write(t testing.TB, path string) {
	t.Helper()
	typ := arrow.DataType(arrow.PrimitiveTypes.Float64)
	if cf.float32 {
		typ = arrow.PrimitiveTypes.Float32
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "lat", Type: typ, Nullable: cf.nullable}, {Name: "lon", Type: typ, Nullable: cf.nullable}}, nil)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	props := parquet.NewWriterProperties(append([]parquet.WriterProperty{parquet.WithMaxRowGroupLength(int64(cf.groupRows))}, cf.props...)...)
	w, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	lat, lon := array.NewBuilder(memory.DefaultAllocator, typ), array.NewBuilder(memory.DefaultAllocator, typ)
	for i := range cf.rows {
		a, o := cf.value(i)
		appendCoord(lat, a, cf.null != nil && cf.null(i))
		appendCoord(lon, o, false)
	}
	rec := array.NewRecordBatch(schema, []arrow.Array{lat.NewArray(), lon.NewArray()}, int64(cf.rows))
	defer rec.Release()
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func appendCoord(b array.Builder, v float64, null bool) {
	switch b := b.(type) {
	case *array.Float64Builder:
		if null {
			b.AppendNull()
		} else {
			b.Append(v)
		}
	case *array.Float32Builder:
		if null {
			b.AppendNull()
		} else {
			b.Append(float32(v))
		}
	}
}

// readCoordChunks reads rows [lo, hi) of path in chunks of chunkRows, with
// the page reader on or off: the columns and the error's text.
func readCoordChunks(t testing.TB, path string, lo, hi int64, chunkRows int, pages bool) (lat, lon []float64, errText string) {
	t.Helper()
	defer func(on bool) { coordPagesOn = on }(coordPagesOn)
	coordPagesOn = pages
	ctx := context.Background()
	r, err := OpenChunksRange(ctx, path, pointio.ReadOptions{}, chunkRows, lo, hi)
	if err != nil {
		return nil, nil, err.Error()
	}
	defer r.Close()
	var slots [3]stream.Chunk
	for k := 0; ; k++ {
		c, err := r.Next(ctx, slots[k%3])
		if err == io.EOF {
			return lat, lon, ""
		}
		if err != nil {
			return lat, lon, err.Error()
		}
		slots[k%3] = c
		lat, lon = append(lat, c.Lat...), append(lon, c.Lon...)
	}
}

// readCoordFile is ReadFileRadians with the page reader on or off.
func readCoordFile(path string, pages bool) (lat, lon []float64, errText string) {
	defer func(on bool) { coordPagesOn = on }(coordPagesOn)
	coordPagesOn = pages
	lat, lon, _, err := ReadFileRadians(context.Background(), path, pointio.ReadOptions{})
	if err != nil {
		return nil, nil, err.Error()
	}
	return lat, lon, ""
}

// sameBits reports whether a and b hold the same float64 bits.
func sameBits(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

// checkCoordPagesRead checks that the page reader reads every row group
// of path (want true) or leaves every one to arrow-go (false).
func checkCoordPagesRead(t *testing.T, path string, want bool) {
	t.Helper()
	rdr, fr, err := openParquetArrow(path, 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	src, err := parquetSourceOf(path, rdr, pointio.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := src.newCoordPages(rdr, fr)
	if p == nil {
		if want {
			t.Fatalf("%s: no page reader", path)
		}
		return
	}
	defer p.Close()
	for g := range rdr.NumRowGroups() {
		n := rdr.MetaData().RowGroup(g).NumRows()
		err := p.readGroup(g, make([]float64, n), make([]float64, n))
		if (err == nil) != want {
			t.Fatalf("%s: row group %d: page reader error %v, want read %v", path, g, err, want)
		}
	}
}

// checkCoordSame checks that the page reader's chunks, whole and cut to a
// range, and its whole-file read, are arrow-go's bit for bit, or its
// error the same.
// wholeFile: compare the whole-file reads too, whose error is the first a
// worker meets (errgroup), not the first row's, where two groups are bad.
func checkCoordSame(t *testing.T, path string, rows int, wholeFile bool) {
	t.Helper()
	for _, r := range [][2]int64{{0, int64(rows)}, {101, int64(rows) - 57}} {
		lat0, lon0, err0 := readCoordChunks(t, path, r[0], r[1], 2000, false)
		lat1, lon1, err1 := readCoordChunks(t, path, r[0], r[1], 2000, true)
		if err0 != err1 || !sameBits(lat0, lat1) || !sameBits(lon0, lon1) {
			t.Fatalf("%s rows %v: chunks differ: arrow-go %d rows %q, pages %d rows %q", path, r, len(lat0), err0, len(lat1), err1)
		}
	}
	if !wholeFile {
		return
	}
	lat0, lon0, err0 := readCoordFile(path, false)
	lat1, lon1, err1 := readCoordFile(path, true)
	if err0 != err1 || !sameBits(lat0, lat1) || !sameBits(lon0, lon1) {
		t.Fatalf("%s: whole file differs: arrow-go %q, pages %q", path, err0, err1)
	}
}

// Every codec and encoding arrow-go writes a double or float column in,
// version 1 and 2 pages, optional and required, many pages and a
// dictionary that falls back to PLAIN mid-chunk, row groups cut across
// chunks: the page reader reads them all, the bits arrow-go's reader
// gives.
func TestCoordPagesMatchArrow(t *testing.T) {
	codecs := []compress.Compression{compress.Codecs.Uncompressed, compress.Codecs.Snappy, compress.Codecs.Gzip,
		compress.Codecs.Zstd, compress.Codecs.Lz4Raw, compress.Codecs.Brotli}
	dicts := map[string][]parquet.WriterProperty{
		"plain": {parquet.WithDictionaryDefault(false)},
		"dict":  {parquet.WithDictionaryDefault(true)},
		// A dictionary page of 512 doubles: the first group's 600
		// distinct values fill it after two batches, and the column goes
		// on in PLAIN pages.
		"fallback": {parquet.WithDictionaryDefault(true), parquet.WithDictionaryPageSizeLimit(4096), parquet.WithBatchSize(256),
			parquet.WithDictionaryCostFallbackFor("lat", false), parquet.WithDictionaryCostFallbackFor("lon", false)},
	}
	dir := t.TempDir()
	for _, codec := range codecs {
		for dname, dict := range dicts {
			for _, v2 := range []bool{false, true} {
				for _, nullable := range []bool{false, true} {
					for _, f32 := range []bool{false, true} {
						if f32 && codec != compress.Codecs.Snappy && codec != compress.Codecs.Zstd {
							continue
						}
						name := fmt.Sprintf("%s-%s-v2=%v-null=%v-f32=%v", codec, dname, v2, nullable, f32)
						props := append([]parquet.WriterProperty{parquet.WithCompression(codec), parquet.WithDataPageSize(3000)}, dict...)
						if v2 {
							props = append(props, parquet.WithDataPageVersion(parquet.DataPageV2))
						}
						cf := coordFile{rows: 5000, groupRows: 777, float32: f32, nullable: nullable, props: props, value: coordValue}
						path := filepath.Join(dir, name+".parquet")
						cf.write(t, path)
						checkCoordPagesRead(t, path, true)
						checkCoordSame(t, path, cf.rows, true)
						if dname == "fallback" && !f32 {
							checkDictionaryFallback(t, path)
						}
					}
				}
			}
		}
	}
}

// Bad values and encodings the page reader leaves to arrow-go's reader:
// the same chunks, or the same error naming the same row.
func TestCoordPagesFallBack(t *testing.T) {
	bad := func(row int, lat, lon float64) func(int) (float64, float64) {
		return func(i int) (float64, float64) {
			if i == row {
				return lat, lon
			}
			return coordValue(i)
		}
	}
	cases := map[string]coordFile{
		"null":           {nullable: true, null: func(i int) bool { return i == 3001 }, value: coordValue},
		"nan-lat":        {value: bad(2500, math.NaN(), 0)},
		"lat-91":         {value: bad(4100, 91, 0)},
		"lon-181":        {value: bad(10, 0, -181)},
		"lat-91-dict":    {value: bad(700, 91, 0), props: []parquet.WriterProperty{parquet.WithDictionaryDefault(true)}},
		"byte-split":     {value: coordValue, props: []parquet.WriterProperty{parquet.WithDictionaryDefault(false), parquet.WithEncoding(parquet.Encodings.ByteStreamSplit)}},
		"null-then-lon":  {nullable: true, null: func(i int) bool { return i == 4000 }, value: bad(3000, 0, 200)},
		"null-v2-snappy": {nullable: true, null: func(i int) bool { return i == 1 }, value: coordValue, props: []parquet.WriterProperty{parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithCompression(compress.Codecs.Snappy)}},
	}
	dir := t.TempDir()
	for name, cf := range cases {
		cf.rows, cf.groupRows = 5000, 1000
		path := filepath.Join(dir, name+".parquet")
		cf.write(t, path)
		checkCoordSame(t, path, cf.rows, name != "null-then-lon")
		_, _, errText := readCoordChunks(t, path, 0, int64(cf.rows), 2000, true)
		if (errText == "") != (name == "byte-split") {
			t.Errorf("%s: error %q", name, errText)
		}
	}
}

// checkDictionaryFallback checks that path's first column chunk is a
// dictionary page, dictionary pages and PLAIN pages after them.
func checkDictionaryFallback(t *testing.T, path string) {
	t.Helper()
	rdr, err := openParquetFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	cc, err := rdr.MetaData().RowGroup(0).ColumnChunk(0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	at, end := cc.DictionaryPageOffset(), cc.DictionaryPageOffset()+cc.TotalCompressedSize()
	var encodings []int32
	for at < end {
		h, err := parsePageHeader(b[at:])
		if err != nil {
			t.Fatal(err)
		}
		encodings = append(encodings, h.encoding)
		at += int64(h.size) + int64(h.compressed)
	}
	if len(encodings) < 3 || encodings[0] != encodingPlain || encodings[1] != encodingRLEDictionary || encodings[len(encodings)-1] != encodingPlain {
		t.Fatalf("%s: pages of encodings %v, want a dictionary, its indices, then PLAIN", path, encodings)
	}
}

// pyarrow's file of float32 coordinates (zstd) is read by the page reader,
// the bits arrow-go's reader gives.
func TestCoordPagesPyarrow(t *testing.T) {
	path := "testdata/airports_pyarrow_f32.parquet"
	checkCoordPagesRead(t, path, true)
	rows, err := ParquetRows(path)
	if err != nil {
		t.Fatal(err)
	}
	checkCoordSame(t, path, int(rows), true)
}

// Any bytes read as a Parquet file give, with the page reader, the chunks
// or the error arrow-go's reader gives: the corpus starts from small
// files of every encoding the page reader reads, and pyarrow's.
func FuzzCoordPages(f *testing.F) {
	dir := f.TempDir()
	for i, props := range [][]parquet.WriterProperty{
		{parquet.WithCompression(compress.Codecs.Snappy)},
		{parquet.WithDictionaryDefault(false), parquet.WithDataPageSize(600)},
		{parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithDataPageSize(600)},
		{parquet.WithDictionaryDefault(true), parquet.WithDictionaryPageSizeLimit(512), parquet.WithBatchSize(32),
			parquet.WithDictionaryCostFallbackFor("lat", false), parquet.WithDictionaryCostFallbackFor("lon", false)},
	} {
		path := filepath.Join(dir, fmt.Sprintf("%d.parquet", i))
		coordFile{rows: 300, groupRows: 130, nullable: i%2 == 0, props: props, value: coordValue}.write(f, path)
		if b, err := os.ReadFile(path); err == nil {
			f.Add(b)
		}
	}
	if b, err := os.ReadFile("testdata/airports_pyarrow_f32.parquet"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "fuzz.parquet")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		lat0, lon0, err0 := readCoordChunks(t, path, 0, -1, 150, false)
		lat1, lon1, err1 := readCoordChunks(t, path, 0, -1, 150, true)
		if err0 != err1 || !sameBits(lat0, lat1) || !sameBits(lon0, lon1) {
			t.Fatalf("arrow-go %d rows %q, pages %d rows %q", len(lat0), err0, len(lat1), err1)
		}
	})
}

// FuzzCoordPages's property over seeded random mutations of its files (a
// few bytes each changed), which run in every test run: go test -fuzz
// runs a whole Parquet read slowly. COORD_MUTATIONS sets how many a
// file (default 200), COORD_MUTATIONS_SEED their seed (default 1).
func TestCoordPagesMutations(t *testing.T) {
	count, rngSeed := 200, uint64(1)
	if s := os.Getenv("COORD_MUTATIONS"); s != "" {
		fmt.Sscan(s, &count)
	}
	if s := os.Getenv("COORD_MUTATIONS_SEED"); s != "" {
		fmt.Sscan(s, &rngSeed)
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(rngSeed, 2))
	for i, props := range [][]parquet.WriterProperty{
		{parquet.WithCompression(compress.Codecs.Snappy)},
		{parquet.WithDictionaryDefault(false), parquet.WithDataPageSize(600)},
		{parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithDataPageSize(600)},
		{parquet.WithCompression(compress.Codecs.Gzip), parquet.WithDictionaryDefault(true), parquet.WithDictionaryPageSizeLimit(512), parquet.WithBatchSize(32),
			parquet.WithDictionaryCostFallbackFor("lat", false), parquet.WithDictionaryCostFallbackFor("lon", false)},
	} {
		seed := filepath.Join(dir, fmt.Sprintf("%d.parquet", i))
		coordFile{rows: 300, groupRows: 130, nullable: i%2 == 0, props: props, value: coordValue}.write(t, seed)
		b, err := os.ReadFile(seed)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "mutated.parquet")
		for range count {
			m := slices.Clone(b)
			for range 1 + rng.IntN(4) {
				m[rng.IntN(len(m))] = byte(rng.IntN(256))
			}
			if err := os.WriteFile(path, m, 0o644); err != nil {
				t.Fatal(err)
			}
			lat0, lon0, err0 := readCoordChunks(t, path, 0, -1, 150, false)
			lat1, lon1, err1 := readCoordChunks(t, path, 0, -1, 150, true)
			if err0 != err1 || !sameBits(lat0, lat1) || !sameBits(lon0, lon1) {
				os.WriteFile(filepath.Join(os.TempDir(), "coord-mismatch.parquet"), m, 0o644)
				t.Fatalf("seed %d: arrow-go %d rows %q, pages %d rows %q", i, len(lat0), err0, len(lat1), err1)
			}
		}
	}
}

// Files written elsewhere (pyarrow's, on the GPU machine: see
// .ci/parquet-read-check): COORD_PAGES_READ names files (space-separated)
// every row group of which the page reader must read, COORD_PAGES_SAME
// files it may leave to arrow-go; every file's chunks and whole-file read
// must be arrow-go's, bit for bit, or its error.
func TestCoordPagesFiles(t *testing.T) {
	read, same := strings.Fields(os.Getenv("COORD_PAGES_READ")), strings.Fields(os.Getenv("COORD_PAGES_SAME"))
	if len(read)+len(same) == 0 {
		t.Skip("no COORD_PAGES_READ or COORD_PAGES_SAME files")
	}
	for _, path := range append(read, same...) {
		rows, err := ParquetRows(path)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(read, path) {
			checkCoordPagesRead(t, path, true)
		}
		checkCoordSame(t, path, int(rows), true)
		t.Logf("%s: %d rows, the same as arrow-go's", path, rows)
	}
}
