package formats

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/paulmach/orb"

	"github.com/geoknn/geoknn/internal/realdata"
	"github.com/geoknn/geoknn/pointio"
)

// testdata is the folder of the sample inputs the format packages share.
const testdata = "../testdata"

// realData is the path of a real data set (cities.csv, airports.csv): the
// full one when it is there (full is true), else the repository's sample.
func realData(tb testing.TB, name string) (path string, full bool) {
	tb.Helper()
	dir, full, err := realdata.Dir()
	if err != nil {
		tb.Fatal(err)
	}
	if !full {
		tb.Logf("full data set not beside the checkout; using the sample in %s", dir)
	}
	return filepath.Join(dir, name), full
}

func TestReadFileSamples(t *testing.T) {
	tests := []struct {
		file string
		want []orb.Point
	}{
		{"quoted.csv", []orb.Point{{8.5403, 47.3779}, {-46.4731, -23.4356}, {139.6503, 35.6762}, {-68.303, -54.8019}}},
		{"bom.csv", []orb.Point{{-0.1278, 51.5074}, {151.2093, -33.8688}}},
		{"points.geojson", []orb.Point{{8.5403, 47.3779}, {-46.4731, -23.4356}, {139.6503, 35.6762}, {-180, -90}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := ReadFile(filepath.Join(testdata, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestReadFileBadSample(t *testing.T) {
	path := filepath.Join(testdata, "bad_lat.csv")
	_, err := ReadFile(path)
	want := path + `:4: latitude "95.2" out of range [-90, 90]`
	if err == nil || err.Error() != want {
		t.Fatalf("ReadFile error = %v, want %s", err, want)
	}
}

// TestReadFileFormat checks the choice of format by extension and content.
func TestReadFileFormat(t *testing.T) {
	const (
		csvData  = "lat,lon\n1,2\n"
		jsonData = `{"type":"Point","coordinates":[2,1]}`
	)
	want := []orb.Point{{2, 1}}
	tests := []struct {
		file, content string
		wantErr       string // substring of the error; "" for success
	}{
		{"a.csv", csvData, ""},
		{"a.CSV", csvData, ""},
		{"a.txt", csvData, ""},
		{"a.geojson", jsonData, ""},
		{"a.GeoJSON", jsonData, ""},
		{"a.json", jsonData, ""},
		{"a.dat", csvData, ""},
		{"a.dat", jsonData, ""},
		{"noext", " \r\n\t" + jsonData, ""},
		{"noext", "\uFEFF\n" + jsonData, ""},
		{"noext", "\uFEFF" + csvData, ""},
		{"a.xyz", strings.Repeat(" ", 200000) + jsonData, ""},                 // within the sniffing window (1 MiB and more)
		{"b.xyz", strings.Repeat(" ", 1<<21) + jsonData, "longer than 1 MiB"}, // beyond it: CSV, one line too long
		{"a.csv", jsonData, "looks like GeoJSON"},                             // the extension wins, and the content is named
		{"a.json", csvData, "invalid JSON"},
		{"empty.csv", "", "empty file"},
		{"empty.geojson", "", "empty file"},
		{"empty", "", "empty file"},
		{"blank", "\n\n  \n", "header has no latitude"},
	}
	dir := t.TempDir()
	for i, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			sub := filepath.Join(dir, string(rune('a'+i)))
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(sub, tt.file)
			if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := ReadFile(path)
			if tt.wantErr == "" {
				if err != nil || !reflect.DeepEqual(got, want) {
					t.Errorf("ReadFile = %v, %v; want %v", got, err, want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), path) {
				t.Errorf("ReadFile error = %v, want one starting with %s and containing %q", err, path, tt.wantErr)
			}
		})
	}
}

func TestReadFileUnreadable(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.csv")
	_, err := ReadFile(missing)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("ReadFile(missing) error = %v, want a not-exist error naming %s", err, missing)
	}
	var ie *pointio.InputError
	if errors.As(err, &ie) {
		t.Errorf("ReadFile(missing) error is an *pointio.InputError: %v", err)
	}

	_, err = ReadFile(dir)
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "directory") {
		t.Errorf("ReadFile(dir) error = %v, want one saying %s is a directory", err, dir)
	}

	if os.Getuid() != 0 { // root reads anything
		locked := filepath.Join(dir, "locked.csv")
		if err := os.WriteFile(locked, []byte("lat,lon\n1,2\n"), 0o000); err != nil {
			t.Fatal(err)
		}
		_, err = ReadFile(locked)
		if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), locked) {
			t.Errorf("ReadFile(locked) error = %v, want a permission error naming %s", err, locked)
		}
	}
}

// TestReadFileAirports reads a real data set: the full one kept outside the
// repository, or the repository's sample of it.
func TestReadFileAirports(t *testing.T) {
	path, full := realData(t, "airports.csv")
	pts, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := 1027 // every 7th row
	if full {
		want = 7184
	}
	if len(pts) != want {
		t.Errorf("got %d points, want %d", len(pts), want)
	}
	// The first row: -6.081689834590001,145.391998291,GKA,"Goroka Airport".
	if want := (orb.Point{145.391998291, -6.081689834590001}); len(pts) > 0 && pts[0] != want {
		t.Errorf("first point = %v, want %v", pts[0], want)
	}
}

// TestReadFileCities reads the larger real data set (or its sample), and
// checks that the full set takes well under a second.
func TestReadFileCities(t *testing.T) {
	path, full := realData(t, "cities.csv")
	start := time.Now()
	pts, err := ReadFile(path)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	want := 2019 // every 67th row
	if full {
		want = 135233
	}
	if len(pts) != want {
		t.Errorf("got %d points, want %d", len(pts), want)
	}
	// The first row: 42.57952,1.65362,1052,"El Tarter".
	if first := (orb.Point{1.65362, 42.57952}); len(pts) > 0 && pts[0] != first {
		t.Errorf("first point = %v, want %v", pts[0], first)
	}
	t.Logf("read %d points in %v", len(pts), elapsed)
	if full && elapsed > time.Second && !testing.Short() && !raceEnabled {
		t.Errorf("reading %s took %v, want well under a second", path, elapsed)
	}
}
