//go:build unix

package pointio

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A FIFO with no writer is neither opened to sniff nor waited on past a
// cancellation: the open returns ctx's error once ctx is done, for an
// input and for an output with no reader (#41 H1).
func TestFIFOOpenStoppable(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "f")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	if IsParquet(fifo) || StartsWith(fifo, "PAR1") {
		t.Error("a FIFO sniffed as Parquet")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ReadFileContext(ctx, fifo); err != context.Canceled {
		t.Errorf("read: err = %v, want context.Canceled", err)
	}
	err := Write(ctx, fifo, nil, nil)
	if err != context.Canceled {
		t.Errorf("write: err = %v, want context.Canceled", err)
	}
	if _, err := OpenChunks(ctx, fifo, ReadOptions{}, 0); err == nil {
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

// A file made read-only while its replacement was written is not
// replaced (#41 W3): the answer's temporary is removed, the file kept.
func TestReadOnlyDuringWrite(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.csv")
	if err := os.WriteFile(out, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := WriteAtomic(out, func(w *bufio.Writer) error {
		_, err := w.WriteString("new\n")
		os.Chmod(out, 0o444)
		return err
	})
	b, _ := os.ReadFile(out)
	names, _ := os.ReadDir(dir)
	if err == nil || string(b) != "old\n" || len(names) != 1 {
		t.Errorf("err %v, out %q, files %d: want a refusal, the old content, no temporary", err, b, len(names))
	}
}
