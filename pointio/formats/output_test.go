package formats

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geoknn/geoknn/pointio"
)

// A cancelled read stops and says so.
func TestReadFileCancelled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.csv")
	var b strings.Builder
	b.WriteString("lat,lon\n")
	for range 200000 {
		b.WriteString("12.5,45.25\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ReadFileContext(ctx, path); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if pts, err := ReadFileContext(context.Background(), path); err != nil || len(pts) != 200000 {
		t.Errorf("%d points, %v", len(pts), err)
	}
}

// Content that is not CSV or GeoJSON text is named, not parsed.
func TestReadFileNamesContent(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, body, want string
	}{
		{"a.csv", "\x1f\x8b\x08\x00rest", "gzip-compressed data is corrupt"},
		{"a.csv", "PAR1rest", "a Parquet file"},
		{"a.csv", "PK\x03\x04rest", "zip archive"},
		{"a.csv", "\xff\xfel\x00a\x00t\x00", "UTF-16"},
		{"a.csv", "lat,lon\n1,\x002\n", "binary data"},
		{"a.csv", "  {\"type\":\"Point\",\"coordinates\":[1,2]}", "looks like GeoJSON"},
		{"b.txt", "{\"type\":\"Point\"}", "looks like GeoJSON"},
	} {
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadFile(path)
		var ie *pointio.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), path) {
			t.Errorf("%q: %v, want an InputError naming %q", tc.body, err, tc.want)
		}
	}
}
