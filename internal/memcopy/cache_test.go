package memcopy

import (
	"os"
	"path/filepath"
	"testing"
)

func TestParseCacheSize(t *testing.T) {
	for s, want := range map[string]int{"32768K": 32 << 20, "300M": 300 << 20, "1G": 1 << 30, "4096": 4096, "": 0, "12Q": 0, "-1K": 0} {
		if got := parseCacheSize(s); got != want {
			t.Errorf("parseCacheSize(%q) = %d, want %d", s, got, want)
		}
	}
}

// The largest cache listed wins; a directory that lists none gives the
// default.
func TestCacheBytesIn(t *testing.T) {
	dir := t.TempDir()
	for name, size := range map[string]string{"index0": "48K\n", "index2": "2048K\n", "index3": "300M\n"} {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, "size"), []byte(size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := cacheBytesIn(dir); got != 300<<20 {
		t.Errorf("got %d, want %d", got, 300<<20)
	}
	if got := cacheBytesIn(t.TempDir()); got != defaultCacheBytes {
		t.Errorf("empty: got %d, want the default %d", got, defaultCacheBytes)
	}
	if LastLevelCacheBytes() <= 0 {
		t.Errorf("LastLevelCacheBytes() = %d", LastLevelCacheBytes())
	}
}
