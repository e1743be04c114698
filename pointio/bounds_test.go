package pointio

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// An output that is standard input's file, through /dev/stdin or
// /proc/self/fd/0, or a hard link to an input, is refused; so are an empty
// name and two outputs naming one file.
func TestCheckOutputResolves(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	os.WriteFile(in, []byte("lat,lon\n1,2\n"), 0o644)
	hard := filepath.Join(dir, "hard.csv")
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	if err := CheckOutput(hard, in); err == nil || !strings.Contains(err.Error(), "is the input") {
		t.Errorf("hard link: %v", err)
	}
	if err := CheckOutput(""); err == nil {
		t.Error("empty name accepted")
	}
	if err := CheckOutputs([]string{filepath.Join(dir, "o.csv"), filepath.Join(dir, ".", "o.csv")}, nil); err == nil {
		t.Error("two outputs naming one file accepted")
	}
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = saved }()
	// The descriptor of os.Stdin stands for fd 0 here: its /proc path.
	for _, p := range []string{"/proc/self/fd/" + strconv.Itoa(int(f.Fd())), in} {
		if err := CheckOutput(p, "-"); err == nil || !strings.Contains(err.Error(), "standard input") {
			t.Errorf("%s: %v, want refused as standard input", p, err)
		}
	}
}

// WriteAll writes every output or none: a failing second output leaves
// the first file as it was and no temporary file behind.
func TestWriteAllOrNone(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	os.WriteFile(a, []byte("old"), 0o644)
	text := func(s string) func(w *bufio.Writer) error {
		return func(w *bufio.Writer) error { _, err := w.WriteString(s); return err }
	}
	failing := func(w *bufio.Writer) error { return errors.New("disk full") }
	err := WriteAll(context.Background(), nil, []Output{{a, text("new")}, {b, failing}})
	if err == nil {
		t.Fatal("no error")
	}
	if got, _ := os.ReadFile(a); string(got) != "old" {
		t.Errorf("a.txt = %q, want it unchanged", got)
	}
	if names, _ := os.ReadDir(dir); len(names) != 1 {
		t.Errorf("left behind: %v", names)
	}
	if err := WriteAll(context.Background(), nil, []Output{{a, text("new")}, {b, text("b")}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(a); string(got) != "new" {
		t.Errorf("a.txt = %q", got)
	}
}
