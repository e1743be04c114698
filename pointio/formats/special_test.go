//go:build unix

package formats

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/arrowio"
)

// A FIFO with no writer is neither opened to sniff nor waited on past a
// cancellation: the open returns ctx's error once ctx is done, for an
// input and for an output with no reader (#41 H1).
func TestFIFOOpenStoppable(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "f")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	if arrowio.IsParquet(fifo) || pointio.StartsWith(fifo, "PAR1") {
		t.Error("a FIFO sniffed as Parquet")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ReadFileContext(ctx, fifo); err != context.Canceled {
		t.Errorf("read: err = %v, want context.Canceled", err)
	}
	err := pointio.Write(ctx, fifo, nil, nil)
	if err != context.Canceled {
		t.Errorf("write: err = %v, want context.Canceled", err)
	}
	if _, err := OpenChunks(ctx, fifo, pointio.ReadOptions{}, 0); err == nil {
		t.Error("OpenChunks: no error once cancelled")
	}
}

// A pipe named by its /dev/fd path is read from its first byte: the
// format is guessed from what its one reader read, not by a sniff that
// opened it again (#41 W1).
func TestPipeByNameReadWhole(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() {
		w.WriteString("lat,lon\n47.37,8.54\n46.2,6.14\n")
		w.Close()
	}()
	path := fmt.Sprintf("/dev/fd/%d", r.Fd())
	if _, err := os.Stat(path); err != nil {
		t.Skip(err)
	}
	pts, err := ReadFile(path)
	if err != nil || len(pts) != 2 || pts[0][1] != 47.37 {
		t.Errorf("ReadFile(%s) = %v, %v, want 2 points from the first byte", path, pts, err)
	}
}
