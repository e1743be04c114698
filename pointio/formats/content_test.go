package formats

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/geoknn/geoknn/pointio"
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

// Named columns are used where a file has them, the usual names
// elsewhere.
func TestReadFileWithColumns(t *testing.T) {
	dir := t.TempDir()
	taxi := filepath.Join(dir, "taxi.csv")
	os.WriteFile(taxi, []byte("pickup_latitude,pickup_longitude,dropoff_latitude,dropoff_longitude\n40.7,-73.9,40.8,-73.95\n"), 0o644)
	plain := filepath.Join(dir, "plain.csv")
	os.WriteFile(plain, []byte("lat,lon\n1,2\n"), 0o644)
	opts := pointio.ReadOptions{LatColumn: "dropoff_latitude", LonColumn: "Dropoff_Longitude"}
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
	pts, ids, err := ReadFileIDs(context.Background(), path, pointio.ReadOptions{IDColumn: "ID"})
	if err != nil || len(ids) != 500 || len(pts) != 500 {
		t.Fatalf("%d points, %d ids, %v", len(pts), len(ids), err)
	}
	for i, id := range ids {
		if id != fmt.Sprintf("p %d,\n x", i) || pts[i] != (orb.Point{float64(i % 170), float64(i % 80)}) {
			t.Fatalf("row %d: %q at %v", i, id, pts[i])
		}
	}
	if _, _, err := ReadFileIDs(context.Background(), path, pointio.ReadOptions{IDColumn: "name"}); err == nil || !strings.Contains(err.Error(), `no id column "name"`) {
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
		pts, ids, err := ReadFileIDs(context.Background(), path, pointio.ReadOptions{IDColumn: tc.col})
		if err != nil || len(pts) != 4 || !slices.Equal(ids, tc.want) {
			t.Errorf("%s: %q, %v", tc.col, ids, err)
		}
	}
}
