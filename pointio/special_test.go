//go:build unix

package pointio

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"
)

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
