//go:build unix

package arrowio

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/geoknn/geoknn/pointio"
)

// A FIFO named as Parquet is read once, through a copy, as the file it
// carries (#41 H1): the same points whole and in chunks, an error about
// its content naming the FIFO (never the copy), no copy left behind.
func TestSpecialInputSpooled(t *testing.T) {
	good := writeTestParquet(t, "ok.parquet", nil, 7, testColumns(50, -1))
	bad := writeTestParquet(t, "bad.parquet", nil, 7, testColumns(50, 30))
	want, _, _, err := ReadFileRadians(context.Background(), good, pointio.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	fifo := filepath.Join(t.TempDir(), "f.parquet")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	feed := func(src string) {
		go func() {
			b, _ := os.ReadFile(src)
			os.WriteFile(fifo, b, 0)
		}()
	}
	feed(good)
	lat, _, _, err := ReadFileRadians(context.Background(), fifo, pointio.ReadOptions{})
	if err != nil || len(lat) != len(want) || lat[49] != want[49] {
		t.Errorf("whole: %d points, %v; want %d", len(lat), err, len(want))
	}
	feed(good)
	if lat, _, _, err = readChunks(t, fifo, pointio.ReadOptions{}); err != nil || len(lat) != len(want) {
		t.Errorf("chunks: %d points, %v; want %d", len(lat), err, len(want))
	}
	feed(bad)
	_, _, _, err = readChunks(t, fifo, pointio.ReadOptions{})
	if err == nil || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), "row 31") {
		t.Errorf("bad content: err = %v, want one naming %s and row 31", err, fifo)
	}
	if names, _ := os.ReadDir(tmp); len(names) != 0 {
		t.Errorf("copies left behind: %v", names)
	}
}
