package pointio

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dirNames lists the names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "result.csv")

	// A new file, with the permissions os.Create would give it.
	if err := WriteAtomic(path, func(w *bufio.Writer) error {
		_, err := w.WriteString("first\n")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "first\n" {
		t.Errorf("content = %q, want %q", got, "first\n")
	}
	if names := dirNames(t, dir); len(names) != 1 || names[0] != "result.csv" {
		t.Errorf("folder holds %q, want only result.csv", names)
	}
	ref, err := os.Create(filepath.Join(t.TempDir(), "ref"))
	if err != nil {
		t.Fatal(err)
	}
	ref.Close()
	refInfo, _ := os.Stat(ref.Name())
	info, _ := os.Stat(path)
	if info.Mode() != refInfo.Mode() {
		t.Errorf("mode = %v, want %v as os.Create gives", info.Mode(), refInfo.Mode())
	}

	// Replacing keeps the permission bits of the old file.
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(path, func(w *bufio.Writer) error {
		_, err := w.WriteString(strings.Repeat("x", 3*writeBufferSize))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); len(got) != 3*writeBufferSize {
		t.Errorf("content has %d bytes, want %d", len(got), 3*writeBufferSize)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o640 {
		t.Errorf("mode after replacing = %v, want 0640", info.Mode())
	}
	if names := dirNames(t, dir); len(names) != 1 {
		t.Errorf("folder holds %q, want only result.csv", names)
	}

	// A relative path in the current folder.
	t.Chdir(dir)
	if err := WriteAtomic("rel.csv", func(w *bufio.Writer) error { return w.WriteByte('r') }); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "rel.csv")); string(got) != "r" {
		t.Errorf("rel.csv holds %q, want %q", got, "r")
	}
}

func TestWriteAtomicErrors(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name     string
		existing string // content of path before the call; "" for no file
		write    func(w *bufio.Writer) error
	}{
		{"error after writing, new file", "", func(w *bufio.Writer) error {
			w.WriteString(strings.Repeat("partial\n", 100000)) // more than the buffer: reaches the file
			return boom
		}},
		{"error after writing, existing file", "old\n", func(w *bufio.Writer) error {
			w.WriteString(strings.Repeat("partial\n", 100000))
			return boom
		}},
		{"immediate error", "old\n", func(w *bufio.Writer) error { return boom }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.csv")
			if tt.existing != "" {
				if err := os.WriteFile(path, []byte(tt.existing), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := WriteAtomic(path, tt.write)
			if !errors.Is(err, boom) || !strings.Contains(err.Error(), path) {
				t.Fatalf("WriteAtomic error = %v, want one wrapping %v and naming %s", err, boom, path)
			}
			got, readErr := os.ReadFile(path)
			switch {
			case tt.existing == "" && !errors.Is(readErr, os.ErrNotExist):
				t.Errorf("output exists after a failed write: %q, %v", got, readErr)
			case tt.existing != "" && string(got) != tt.existing:
				t.Errorf("existing file changed to %q, want %q", got, tt.existing)
			}
			want := 0
			if tt.existing != "" {
				want = 1
			}
			if names := dirNames(t, dir); len(names) != want {
				t.Errorf("folder holds %q after a failed write, want %d file(s)", names, want)
			}
		})
	}
}

func TestWriteAtomicPanic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.csv")
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic did not propagate")
			}
		}()
		_ = WriteAtomic(path, func(w *bufio.Writer) error {
			w.WriteString("partial")
			panic("bug")
		})
	}()
	if names := dirNames(t, dir); len(names) != 0 {
		t.Errorf("folder holds %q after a panic, want nothing", names)
	}
}

func TestWriteAtomicBadPath(t *testing.T) {
	dir := t.TempDir()
	called := false
	write := func(w *bufio.Writer) error { called = true; return nil }

	// Missing folder: fails before calling write.
	missing := filepath.Join(dir, "no", "such", "out.csv")
	if err := WriteAtomic(missing, write); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("WriteAtomic into a missing folder: error = %v, want one naming %s", err, missing)
	}
	if called {
		t.Error("write was called although the output cannot be created")
	}

	// A folder name rather than a file name.
	if err := WriteAtomic(dir+string(filepath.Separator), write); err == nil {
		t.Error("WriteAtomic to a folder path succeeded")
	}

	// The path is an existing folder: the rename fails, nothing is left.
	sub := filepath.Join(dir, "sub")
	if err := os.MkdirAll(filepath.Join(sub, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(sub, func(w *bufio.Writer) error { return w.WriteByte('x') }); err == nil {
		t.Error("WriteAtomic over a non-empty folder succeeded")
	}
	if names := dirNames(t, dir); len(names) != 1 || names[0] != "sub" {
		t.Errorf("folder holds %q, want only sub", names)
	}
}
