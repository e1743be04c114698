package arrowio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/stream"
	"github.com/paulmach/orb"
)

// writeTestParquet writes one column set as a Parquet file (with the
// given schema metadata, e.g. GeoParquet's "geo"), in row groups of
// groupRows, and returns its path.
func writeTestParquet(t testing.TB, name string, meta map[string]string, groupRows int64, cols map[string]arrow.Array) string {
	t.Helper()
	var fields []arrow.Field
	var arrs []arrow.Array
	for _, n := range []string{"id", "lat", "lon", "latitude", "lng", "geometry"} {
		if a, ok := cols[n]; ok {
			fields = append(fields, arrow.Field{Name: n, Type: a.DataType(), Nullable: true})
			arrs = append(arrs, a)
		}
	}
	md := arrow.MetadataFrom(meta)
	schema := arrow.NewSchema(fields, &md)
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	fw, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(groupRows)), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	rec := array.NewRecordBatch(schema, arrs, int64(arrs[0].Len()))
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path
}

func floats64(v []float64, nulls ...int) arrow.Array {
	b := array.NewFloat64Builder(memory.DefaultAllocator)
	valid := make([]bool, len(v))
	for i := range valid {
		valid[i] = true
	}
	for _, i := range nulls {
		valid[i] = false
	}
	b.AppendValues(v, valid)
	return b.NewArray()
}

func floats32(v []float32) arrow.Array {
	b := array.NewFloat32Builder(memory.DefaultAllocator)
	b.AppendValues(v, nil)
	return b.NewArray()
}

// wkb is an ISO WKB point, little or big endian.
func wkb(lon, lat float64, big bool) []byte {
	var order binary.AppendByteOrder = binary.LittleEndian
	b := []byte{1}
	if big {
		order, b[0] = binary.BigEndian, 0
	}
	b = order.AppendUint32(b, 1)
	b = order.AppendUint64(b, math.Float64bits(lon))
	return order.AppendUint64(b, math.Float64bits(lat))
}

func wkbColumn(pts ...[]byte) arrow.Array {
	b := array.NewBinaryBuilder(memory.DefaultAllocator, arrow.BinaryTypes.Binary)
	for _, p := range pts {
		b.Append(p)
	}
	return b.NewArray()
}

const geoWKB = `{"version":"1.1.0","primary_column":"geometry","columns":{"geometry":{"encoding":"WKB","geometry_types":["Point"]}}}`

func TestReadParquet(t *testing.T) {
	lat, lon := make([]float64, 5000), make([]float64, 5000)
	for i := range lat {
		lat[i], lon[i] = float64(i%180)-89.5, float64(i%360)-179.5
	}
	want := make([]orb.Point, len(lat))
	for i := range want {
		want[i] = orb.Point{lon[i], lat[i]}
	}
	native := array.NewStructBuilder(memory.DefaultAllocator, arrow.StructOf(
		arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float64}, arrow.Field{Name: "y", Type: arrow.PrimitiveTypes.Float64}))
	for i := range 3 {
		native.Append(true)
		native.FieldBuilder(0).(*array.Float64Builder).Append(lon[i])
		native.FieldBuilder(1).(*array.Float64Builder).Append(lat[i])
	}
	for _, tc := range []struct {
		name string
		path string
		want []orb.Point
	}{
		{"lat/lon columns, row groups of 700", writeTestParquet(t, "a.parquet", nil, 700,
			map[string]arrow.Array{"lat": floats64(lat), "lon": floats64(lon)}), want},
		{"float32 latitude/lng", writeTestParquet(t, "b.parquet", nil, 1<<20,
			map[string]arrow.Array{"latitude": floats32([]float32{1.5, -2.25}), "lng": floats32([]float32{3, 4})}),
			[]orb.Point{{3, 1.5}, {4, -2.25}}},
		{"GeoParquet WKB, both byte orders", writeTestParquet(t, "c.parquet", map[string]string{"geo": geoWKB}, 1<<20,
			map[string]arrow.Array{"geometry": wkbColumn(wkb(8.5, 47.4, false), wkb(-73.9, 40.7, true))}),
			[]orb.Point{{8.5, 47.4}, {-73.9, 40.7}}},
		{"GeoParquet native points", writeTestParquet(t, "d.parquet", map[string]string{"geo": strings.Replace(
			geoWKB, `"WKB"`, `"point"`, 1)}, 1<<20, map[string]arrow.Array{"geometry": native.NewArray()}), want[:3]},
		{"no extension: sniffed", renamed(t, writeTestParquet(t, "e.parquet", nil, 1<<20,
			map[string]arrow.Array{"lat": floats64(lat[:2]), "lon": floats64(lon[:2])}), "points"), want[:2]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadFile(context.Background(), tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("%d points, want %d", len(got), len(tc.want))
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("point %d = %v, want %v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func renamed(t *testing.T, path, name string) string {
	to := filepath.Join(filepath.Dir(path), name)
	if err := os.Rename(path, to); err != nil {
		t.Fatal(err)
	}
	return to
}

func TestReadParquetErrors(t *testing.T) {
	projected := strings.Replace(geoWKB, `"geometry_types"`, `"crs":{"name":"WGS 84 / UTM zone 32N","id":{"authority":"EPSG","code":32632}},"geometry_types"`, 1)
	lines := strings.Replace(geoWKB, `["Point"]`, `["LineString"]`, 1)
	for _, tc := range []struct {
		name, file string
		meta       map[string]string
		cols       map[string]arrow.Array
		want       string
	}{
		{"latitude out of range", "a.parquet", nil, map[string]arrow.Array{"lat": floats64([]float64{1, 2, 95.5}), "lon": floats64([]float64{1, 2, 3})},
			"a.parquet: row 3: latitude 95.5 out of range [-90, 90]"},
		{"null longitude", "b.parquet", nil, map[string]arrow.Array{"lat": floats64([]float64{1, 2}), "lon": floats64([]float64{1, 2}, 1)},
			"b.parquet: row 2: longitude missing (null)"},
		{"no coordinate columns", "c.parquet", nil, map[string]arrow.Array{"id": floats64([]float64{1})},
			"no latitude or longitude column"},
		{"projected CRS", "d.parquet", map[string]string{"geo": projected}, map[string]arrow.Array{"geometry": wkbColumn(wkb(1, 2, false))},
			`CRS "WGS 84 / UTM zone 32N" (EPSG:32632) is not longitude/latitude`},
		{"line strings", "e.parquet", map[string]string{"geo": lines}, map[string]arrow.Array{"geometry": wkbColumn(wkb(1, 2, false))},
			"holds LineString geometries"},
		{"a WKB line among points", "f.parquet", map[string]string{"geo": geoWKB},
			map[string]arrow.Array{"geometry": wkbColumn(wkb(1, 2, false), []byte{1, 2, 0, 0, 0, 0, 0, 0, 0})},
			"f.parquet: row 2: WKB geometry of type 2 is not a point"},
		{"no rows", "g.parquet", nil, map[string]arrow.Array{"lat": floats64(nil), "lon": floats64(nil)}, "g.parquet: no points"},
		{"primary column missing", "i.parquet", map[string]string{"geo": strings.ReplaceAll(geoWKB, `"geometry"`, `"geom"`)},
			map[string]arrow.Array{"geometry": wkbColumn(wkb(1, 2, false))}, `primary column "geom", which the metadata does not describe or the file lacks`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeTestParquet(t, tc.file, tc.meta, 1<<20, tc.cols)
			_, err := ReadFile(context.Background(), path)
			var ie *pointio.InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want an InputError containing %q", err, tc.want)
			}
		})
	}
	bad := filepath.Join(t.TempDir(), "h.parquet")
	if err := os.WriteFile(bad, []byte("PAR1 not really"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "not a readable Parquet file") {
		t.Errorf("truncated file: %v", err)
	}
}

// Every Parquet writer's file reads back with the same rows.
func TestWriteParquetRoundTrip(t *testing.T) {
	n := parquetGroupItems + 3 // two row groups
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	err := WriteResults(w, pointio.FormatParquet, n, func(i int) (uint32, float64) { return uint32(i * 7 % 1000), float64(i) / 8 })
	if err != nil || w.Flush() != nil {
		t.Fatal(err)
	}
	tbl := readBack(t, buf.Bytes())
	if tbl.NumRows() != int64(n) || tbl.NumCols() != 3 {
		t.Fatalf("%d rows, %d columns", tbl.NumRows(), tbl.NumCols())
	}
	for _, i := range []int{0, 1, parquetGroupItems, n - 1} {
		obs, ref, m := cell[int64](tbl, 0, i), cell[uint32](tbl, 1, i), cell[float64](tbl, 2, i)
		if obs != int64(i) || ref != uint32(i*7%1000) || m != float64(i)/8 {
			t.Errorf("row %d: %d %d %v", i, obs, ref, m)
		}
	}

	buf.Reset()
	w.Reset(&buf)
	err = WriteKResults(w, pointio.FormatParquet, 3, 2, func(i, r int) (uint32, float64, bool) { return uint32(10*i + r), 1.5, i != 1 || r == 0 })
	if err != nil || w.Flush() != nil {
		t.Fatal(err)
	}
	if tbl := readBack(t, buf.Bytes()); tbl.NumRows() != 5 || cell[int32](tbl, 1, 4) != 2 || cell[uint32](tbl, 2, 2) != 10 {
		t.Errorf("k rows: %d rows, last rank %d", tbl.NumRows(), cell[int32](tbl, 1, 4))
	}

	buf.Reset()
	w.Reset(&buf)
	in := stream.Within{Count: func(i int) int { return i }, Ref: func(i, r int) (uint32, float64) { return uint32(r), float64(i) }}
	if err := WriteWithin(w, pointio.FormatParquet, 4, in); err != nil || w.Flush() != nil {
		t.Fatal(err)
	}
	if tbl := readBack(t, buf.Bytes()); tbl.NumRows() != 6 || cell[int64](tbl, 0, 5) != 3 {
		t.Errorf("within rows: %d", tbl.NumRows())
	}
}

func readBack(t *testing.T, b []byte) arrow.Table {
	t.Helper()
	rdr, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tbl.Release)
	return tbl
}

// cell is row i of column c of a table of one-typed columns.
func cell[T int32 | int64 | uint32 | float64](tbl arrow.Table, c, i int) T {
	for _, chunk := range tbl.Column(c).Data().Chunks() {
		if i < chunk.Len() {
			switch a := chunk.(type) {
			case *array.Int32:
				return T(a.Value(i))
			case *array.Int64:
				return T(a.Value(i))
			case *array.Uint32:
				return T(a.Value(i))
			case *array.Float64:
				return T(a.Value(i))
			}
		}
		i -= chunk.Len()
	}
	panic("no such cell")
}

// A Parquet file of any bytes gives points or an InputError, never a
// panic; the corpus starts from the files the tests above write.
func FuzzReadParquet(f *testing.F) {
	for _, p := range []string{
		writeTestParquet(f, "a.parquet", nil, 2, map[string]arrow.Array{"lat": floats64([]float64{1, 2, 3}), "lon": floats64([]float64{4, 5, 6})}),
		writeTestParquet(f, "b.parquet", map[string]string{"geo": geoWKB}, 1, map[string]arrow.Array{"geometry": wkbColumn(wkb(8.5, 47.4, false), wkb(1, 2, true))}),
		writeTestParquet(f, "c.parquet", map[string]string{arrowSchemaKey: base64.StdEncoding.EncodeToString(schemaMessage(1<<50, 0))}, 2,
			map[string]arrow.Array{"lat": floats64([]float64{1, 2, 3}), "lon": floats64([]float64{4, 5, 6})}),
	} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	addTestdata(f, "*.parquet")
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "fuzz.parquet")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		pts, err := ReadFile(context.Background(), path)
		checkResult(t, pts, err)
		checkStreamAgrees(t, path, pts, err)
	})
}

// checkResult checks the readers' contract: valid points or an
// *pointio.InputError, never both.
func checkResult(t *testing.T, pts []orb.Point, err error) {
	t.Helper()
	if err != nil {
		var ie *pointio.InputError
		if pts != nil || !errors.As(err, &ie) || ie.Reason == "" {
			t.Fatalf("points %d with error %v (%T)", len(pts), err, err)
		}
		return
	}
	if len(pts) == 0 {
		t.Fatal("no points and no error")
	}
	for i, p := range pts {
		if !(p[1] >= -90 && p[1] <= 90 && p[0] >= -180 && p[0] <= 180) {
			t.Fatalf("point %d = %v is not a valid coordinate", i, p)
		}
	}
}

func BenchmarkReadParquet(b *testing.B) {
	const rows = 1 << 20
	lat, lon := make([]float64, rows), make([]float64, rows)
	for i := range rows {
		lat[i], lon[i] = float64(i%179)-89.3, float64(i%359)-179.3
	}
	path := writeTestParquet(b, "bench.parquet", nil, 1<<17, map[string]arrow.Array{"lat": floats64(lat), "lon": floats64(lon)})
	fi, _ := os.Stat(path)
	b.SetBytes(fi.Size())
	for b.Loop() {
		pts, err := ReadFile(context.Background(), path)
		if err != nil || len(pts) != rows {
			b.Fatal(len(pts), err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// Arrow IPC files and streams read as Parquet files do, and the answers
// written as Arrow read back.
func TestArrowIPC(t *testing.T) {
	lat, lon := floats64([]float64{47.4, -33.9, 95}), floats32([]float32{8.5, 151.25, 0})
	schema := arrow.NewSchema([]arrow.Field{{Name: "Latitude", Type: lat.DataType()}, {Name: "lng", Type: lon.DataType()}}, nil)
	// A batch's columns hold its length exactly: one that holds more is
	// corrupt (TestArrowBatchLengthMismatch).
	rec := array.NewRecordBatch(schema, []arrow.Array{array.NewSlice(lat, 0, 2), array.NewSlice(lon, 0, 2)}, 2)
	bad := array.NewRecordBatch(schema, []arrow.Array{lat, lon}, 3)
	dir := t.TempDir()
	write := func(name string, stream bool, recs ...arrow.RecordBatch) string {
		var buf bytes.Buffer
		var w interface {
			Write(arrow.RecordBatch) error
			Close() error
		}
		if stream {
			w = ipc.NewWriter(&buf, ipc.WithSchema(schema))
		} else {
			fw, err := ipc.NewFileWriter(&buf, ipc.WithSchema(schema))
			if err != nil {
				t.Fatal(err)
			}
			w = fw
		}
		for _, r := range recs {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
		p := filepath.Join(dir, name)
		os.WriteFile(p, buf.Bytes(), 0o644)
		return p
	}
	want := []orb.Point{{8.5, 47.4}, {151.25, -33.9}}
	for _, p := range []string{write("a.arrow", false, rec, rec), write("b.arrows", true, rec, rec), write("sniffed", false, rec, rec)} {
		if !Handles(p) {
			t.Errorf("%s: not handled", p)
		}
		got, err := ReadFile(context.Background(), p)
		if err != nil || len(got) != 4 || got[0] != want[0] || got[3] != want[1] {
			t.Errorf("%s: %v, %v", p, got, err)
		}
	}
	_, err := ReadFile(context.Background(), write("c.feather", false, rec, bad))
	if err == nil || !strings.Contains(err.Error(), "c.feather: row 5: latitude 95 out of range") {
		t.Errorf("bad row: %v", err)
	}

	var buf bytes.Buffer
	if err := WriteResults(&buf, pointio.FormatArrow, 3, func(i int) (uint32, float64) { return uint32(i), 1 }); err != nil {
		t.Fatal(err)
	}
	r, err := ipc.NewFileReader(bytes.NewReader(buf.Bytes()))
	if err != nil || r.NumRecords() != 1 || r.Schema().Field(2).Name != "distance_m" {
		t.Fatalf("answers as Arrow: %v", err)
	}
	if b, _ := r.RecordBatch(0); b.NumRows() != 3 {
		t.Errorf("answers as Arrow: %d rows", b.NumRows())
	}
}

// Parquet (several row groups) and Arrow files give their id column, as
// text, row for row.
func TestReadFileIDs(t *testing.T) {
	lat, lon, id := make([]float64, 1000), make([]float64, 1000), make([]float64, 1000)
	for i := range lat {
		lat[i], lon[i], id[i] = float64(i%90), float64(i%180), float64(10*i)
	}
	path := writeTestParquet(t, "ids.parquet", nil, 300, map[string]arrow.Array{"lat": floats64(lat), "lon": floats64(lon), "id": floats64(id)})
	pts, ids, err := ReadFileIDs(context.Background(), path, pointio.ReadOptions{IDColumn: "id"})
	if err != nil || len(ids) != 1000 || ids[999] != "9990" || pts[999] != (orb.Point{999 % 180, 999 % 90}) {
		t.Fatalf("parquet: %d ids, last %q, %v", len(ids), ids[len(ids)-1], err)
	}
	if _, _, err := ReadFileIDs(context.Background(), path, pointio.ReadOptions{IDColumn: "name"}); err == nil {
		t.Error("a missing id column read")
	}
}

// An Arrow IPC file of any bytes gives points or an InputError: verifyIPC
// refuses metadata whose vectors do not fit (arrow-go would allocate what
// they claim), cappedAllocator bounds message bodies.
func FuzzReadArrow(f *testing.F) {
	lat, lon := floats64([]float64{1, 2}), floats64([]float64{3, 4})
	schema := arrow.NewSchema([]arrow.Field{{Name: "lat", Type: lat.DataType()}, {Name: "lon", Type: lon.DataType()}}, nil)
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
		f.Add(buf.Bytes())
	}
	addTestdata(f, "*.feather")
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "fuzz.arrow")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		pts, err := ReadFile(context.Background(), path)
		checkResult(t, pts, err)
		checkStreamAgrees(t, path, pts, err)
	})
}

// Rows read in ranges, as MPI ranks read their shares, are the whole
// file's, ids with them; only the row groups that hold the range are read,
// and a bad value is named by its row in the whole file.
func TestReadParquetRows(t *testing.T) {
	const n = 1000
	lat, lon := make([]float64, n), make([]float64, n)
	ib := array.NewStringBuilder(memory.DefaultAllocator)
	for i := range n {
		lat[i], lon[i] = float64(i%170)-85.25, float64(i%350)-175.5
		ib.Append("p" + strconv.Itoa(i))
	}
	ids := ib.NewArray()
	path := writeTestParquet(t, "rows.parquet", nil, 64, map[string]arrow.Array{"id": ids, "lat": floats64(lat), "lon": floats64(lon)})
	if rows, err := ParquetRows(path); err != nil || rows != n {
		t.Fatalf("ParquetRows = %d, %v", rows, err)
	}
	opts := pointio.ReadOptions{IDColumn: "id"}
	wantLat, wantLon, wantIDs, err := ReadFileRadians(context.Background(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]int64{{0, n}, {150, 420}, {420, 420}, {999, 1000}, {64, 128}} {
		la, lo, id, err := ReadFileRadiansRows(context.Background(), path, opts, r[0], r[1])
		if err != nil || int64(len(la)) != r[1]-r[0] || len(id) != len(la) {
			t.Fatalf("rows %v: %d rows, %d ids, %v", r, len(la), len(id), err)
		}
		for i := range la {
			k := r[0] + int64(i)
			if la[i] != wantLat[k] || lo[i] != wantLon[k] || id[i] != wantIDs[k] {
				t.Fatalf("rows %v: row %d differs from the whole file's", r, k)
			}
		}
	}
	lat[700] = 91
	bad := writeTestParquet(t, "bad.parquet", nil, 64, map[string]arrow.Array{"lat": floats64(lat), "lon": floats64(lon)})
	_, _, _, whole := ReadFileRadians(context.Background(), bad, pointio.ReadOptions{})
	_, _, _, part := ReadFileRadiansRows(context.Background(), bad, pointio.ReadOptions{}, 650, 800)
	if whole == nil || part == nil || whole.Error() != part.Error() {
		t.Errorf("bad row: whole file %v, rows [650, 800) %v", whole, part)
	}
	if _, _, _, err := ReadFileRadiansRows(context.Background(), bad, pointio.ReadOptions{}, 0, 600); err != nil {
		t.Errorf("rows before the bad one: %v", err)
	}
	if _, _, _, err := ReadFileRadiansRows(context.Background(), path, opts, 10, n+1); err == nil {
		t.Error("rows past the end: no error")
	}
}
