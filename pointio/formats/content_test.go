package pointio

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/paulmach/orb"
)

// gzip-compressed text is read as the name without .gz says, and standard
// input ("-") as its content says.
func TestReadGzipAndStdin(t *testing.T) {
	dir := t.TempDir()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("lat,lon\n47.4,8.5\n-33.9,151.2\n"))
	zw.Close()
	path := filepath.Join(dir, "points.csv.gz")
	if err := os.WriteFile(path, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []orb.Point{{8.5, 47.4}, {151.2, -33.9}}
	if got, err := ReadFile(path); err != nil || len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("gzip CSV: %v, %v", got, err)
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin := os.Stdin
	os.Stdin = r
	t.Cleanup(func() { os.Stdin = stdin })
	go func() {
		w.Write([]byte(`{"type":"MultiPoint","coordinates":[[8.5,47.4],[151.2,-33.9]]}`))
		w.Close()
	}()
	if got, err := ReadFile("-"); err != nil || len(got) != 2 || got[1] != want[1] {
		t.Errorf("GeoJSON on standard input: %v, %v", got, err)
	}
}

// Semicolon, tab and bar files are read as comma files are; a quoted
// comma in the header does not fool the guess.
func TestReadCSVDelimiters(t *testing.T) {
	for _, body := range []string{
		"lat;lon;name\n47.4;8.5;\"Zürich, ZH\"\n",
		"lat\tlon\tname\n47.4\t8.5\tZürich\n",
		"\"name, long\"|lat|lon\nZürich|47.4|8.5\n",
	} {
		got, err := ReadCSV(bytes.NewReader([]byte(body)), "t.csv")
		if err != nil || len(got) != 1 || got[0] != (orb.Point{8.5, 47.4}) {
			t.Errorf("%q: %v, %v", body, got, err)
		}
	}
}

// Named columns are used where a file has them, the usual names
// elsewhere.
func TestReadFileWithColumns(t *testing.T) {
	dir := t.TempDir()
	taxi := filepath.Join(dir, "taxi.csv")
	os.WriteFile(taxi, []byte("pickup_latitude,pickup_longitude,dropoff_latitude,dropoff_longitude\n40.7,-73.9,40.8,-73.95\n"), 0o644)
	plain := filepath.Join(dir, "plain.csv")
	os.WriteFile(plain, []byte("lat,lon\n1,2\n"), 0o644)
	opts := ReadOptions{LatColumn: "dropoff_latitude", LonColumn: "Dropoff_Longitude"}
	if got, err := ReadFileWith(context.Background(), taxi, opts); err != nil || got[0] != (orb.Point{-73.95, 40.8}) {
		t.Errorf("taxi: %v, %v", got, err)
	}
	if got, err := ReadFileWith(context.Background(), plain, opts); err != nil || got[0] != (orb.Point{2, 1}) {
		t.Errorf("plain: %v, %v", got, err)
	}
	if _, err := ReadFile(taxi); err == nil || !strings.Contains(err.Error(), "no latitude or longitude column") {
		t.Errorf("taxi without options: %v", err)
	}
}

// Records cut into chunks anywhere (quoted fields with newlines, commas
// and doubled quotes across chunk ends) read as one pass of encoding/csv
// reads them, and a bad value is named on its line of the whole input.
func TestReadCSVChunks(t *testing.T) {
	var b strings.Builder
	b.WriteString("name,lat,lon\n")
	for i := range 300 {
		fmt.Fprintf(&b, "\"place %d, \"\"quoted\"\"\nsecond line\",%d.25,%d.5\n", i, i%170-85, i%350-175)
		if i%7 == 0 {
			b.WriteString("\n,,\n") // blank lines and rows
		}
	}
	input := b.String()
	want, _, err := readCSV(bufio.NewReader(strings.NewReader(input)), "t.csv", 0, ReadOptions{})
	if err != nil || len(want) != 300 {
		t.Fatalf("%d points, %v", len(want), err)
	}
	for _, block := range []int{1, 7, 64, 1000, 1 << 20} {
		got, err := readChunked(input, block)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("blocks of %d: %d points, %v", block, len(got), err)
		}
	}
	bad := strings.Replace(input, ",15.25,", ",15.25x,", 1)
	wantLine := strings.Count(bad[:strings.Index(bad, "15.25x")], "\n") + 1
	for _, block := range []int{5, 64, 1000} {
		_, err := readChunked(bad, block)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Line != wantLine || ie.Value != "15.25x" {
			t.Errorf("blocks of %d: %v, want line %d", block, err, wantLine)
		}
	}
}

func readChunked(input string, block int) ([]orb.Point, error) {
	rows, br, err := openCSV(input)
	if err != nil {
		return nil, err
	}
	return rows.readChunks(br, rows.headerEnd, block, 0)
}

// readOnePass is the reference: one encoding/csv pass over the input.
func readOnePass(input string) ([]orb.Point, error) {
	rows, _, err := openCSV(input)
	if err != nil {
		return nil, err
	}
	return rows.readPoints(nil)
}

// openCSV reads the header of input as readCSV does.
func openCSV(input string) (*csvRows, *bufio.Reader, error) {
	br := bufio.NewReader(strings.NewReader(input))
	if err := skipBOM(br); err != nil {
		return nil, nil, err
	}
	cr := newCSVReader(br)
	cr.Comma = sniffDelimiter(br)
	rows, err := readHeader(cr, "t.csv", ReadOptions{})
	return rows, br, err
}

// Any input reads as one encoding/csv pass reads it, points or error
// (with its line), in blocks of any size.
func FuzzCSVChunks(f *testing.F) {
	f.Add("lat,lon\n1,2\n\"3\n\",4\n", 3)
	f.Add("lat;lon\n1;2\n3;x\n", 1)
	f.Add("lat,lon,\"note\nmore\"\n1,2,a\n95,3,b\n", 2)
	f.Add("lat,lon\n1,2,5'10\"\n3,4\n95,5\n", 4)
	f.Fuzz(func(t *testing.T, input string, block int) {
		block = 1 + abs(block)%64
		want, werr := readOnePass(input)
		got, gerr := readChunked(input, block)
		if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) || !slices.Equal(got, want) {
			t.Fatalf("blocks of %d: %v, %v; whole: %v, %v", block, got, gerr, want, werr)
		}
	})
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Ids follow their points through chunks and skipped blank rows.
func TestReadFileIDs(t *testing.T) {
	var b strings.Builder
	b.WriteString("id,lat,lon\n")
	for i := range 500 {
		fmt.Fprintf(&b, "\"p %d,\n x\",%d,%d\n", i, i%80, i%170)
		if i%9 == 0 {
			b.WriteString(",,\n")
		}
	}
	path := filepath.Join(t.TempDir(), "ids.csv")
	os.WriteFile(path, []byte(b.String()), 0o644)
	pts, ids, err := ReadFileIDs(context.Background(), path, ReadOptions{IDColumn: "ID"})
	if err != nil || len(ids) != 500 || len(pts) != 500 {
		t.Fatalf("%d points, %d ids, %v", len(pts), len(ids), err)
	}
	for i, id := range ids {
		if id != fmt.Sprintf("p %d,\n x", i) || pts[i] != (orb.Point{float64(i % 170), float64(i % 80)}) {
			t.Fatalf("row %d: %q at %v", i, id, pts[i])
		}
	}
	if _, _, err := ReadFileIDs(context.Background(), path, ReadOptions{IDColumn: "name"}); err == nil || !strings.Contains(err.Error(), `no id column "name"`) {
		t.Errorf("missing id column: %v", err)
	}
}

// GeoJSON ids: the feature "id" member, or a property; a MultiPoint's
// points share their feature's.
func TestReadGeoJSONIDs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ids.geojson")
	os.WriteFile(path, []byte(`{"type":"FeatureCollection","features":[
 {"type":"Feature","id":7,"properties":{"name":"a, b"},"geometry":{"type":"Point","coordinates":[1,2]}},
 {"type":"Feature","id":"x","properties":{"name":null},"geometry":{"type":"MultiPoint","coordinates":[[3,4],[5,6]]}},
 {"type":"Feature","properties":null,"geometry":{"type":"Point","coordinates":[7,8]}}]}`), 0o644)
	for _, tc := range []struct {
		col  string
		want []string
	}{{"id", []string{"7", "x", "x", ""}}, {"name", []string{"a, b", "", "", ""}}} {
		pts, ids, err := ReadFileIDs(context.Background(), path, ReadOptions{IDColumn: tc.col})
		if err != nil || len(pts) != 4 || !slices.Equal(ids, tc.want) {
			t.Errorf("%s: %q, %v", tc.col, ids, err)
		}
	}
}
