package pointio

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
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
