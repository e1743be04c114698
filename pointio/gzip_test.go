package pointio

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
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
