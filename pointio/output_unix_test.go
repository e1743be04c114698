//go:build unix

package pointio

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A FIFO is streamed to its reader.
func TestWriteFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	got := make(chan string)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- string(b)
	}()
	if err := Write(context.Background(), fifo, nil, hello); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "hello\n" {
		t.Errorf("the reader got %q", s)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Error("the FIFO was replaced")
	}
}

// A device node made in a temporary folder (root only) is written in
// place, as /dev/null is.
func TestWriteDeviceNode(t *testing.T) {
	node := filepath.Join(t.TempDir(), "null")
	if err := syscall.Mknod(node, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Skipf("cannot make a device node (root only): %v", err)
	}
	if err := Write(context.Background(), node, nil, hello); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(node); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Error("the device node was replaced")
	}
	if err := WriteAtomic(node, hello); err == nil {
		t.Error("WriteAtomic replaced a device node")
	}
}
