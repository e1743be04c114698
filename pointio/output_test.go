package pointio

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func hello(w *bufio.Writer) error {
	_, err := w.WriteString("hello\n")
	return err
}

func TestWriteDestinations(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()

	file := filepath.Join(dir, "a.csv")
	if err := Write(ctx, file, nil, hello); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(file); string(b) != "hello\n" {
		t.Errorf("regular file holds %q", b)
	}

	// A link to a regular file: the target is written, the link stays.
	link := filepath.Join(dir, "link.csv")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	if err := Write(ctx, link, nil, func(w *bufio.Writer) error { _, err := w.WriteString("again\n"); return err }); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced")
	}
	if b, _ := os.ReadFile(file); string(b) != "again\n" {
		t.Errorf("link target holds %q", b)
	}

	var out bytes.Buffer
	if err := Write(ctx, "-", &out, hello); err != nil || out.String() != "hello\n" {
		t.Errorf("stdout: %v, %q", err, out.String())
	}

	// /dev/null, and a link to it, are written in place, never replaced.
	devLink := filepath.Join(dir, "null")
	if err := os.Symlink("/dev/null", devLink); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/dev/null", devLink} {
		if err := Write(ctx, p, nil, hello); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatal("/dev/null is no longer a character device")
	}
	if fi, _ := os.Lstat(devLink); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link to /dev/null was replaced")
	}
	if err := Write(ctx, "/dev/full", nil, hello); err == nil || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("/dev/full: %v, want no space left", err)
	}
}

func TestCheckOutput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("lat,lon\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "same.csv")
	if err := os.Symlink(in, link); err != nil {
		t.Fatal(err)
	}
	readOnly := filepath.Join(dir, "kept.csv")
	if err := os.WriteFile(readOnly, []byte("0,1,2\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(dir, "old.csv")
	if err := os.WriteFile(old, []byte("0,1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, want string
	}{
		{"-", ""}, {"/dev/null", ""}, {filepath.Join(dir, "new.csv"), ""},
		{dir, "is a directory"},
		{filepath.Join(dir, "missing", "a.csv"), "no such file"},
		{in, "is the input"}, {link, "is the input"},
		{in + "/x", "not a directory"},
		{readOnly, "read-only"}, {old, ""},
	} {
		err := CheckOutput(tc.path, in)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckOutput(%s) = %v, want %q", tc.path, err, tc.want)
		}
	}
}

// Two outputs are one file when a link names the other, the link dangling
// until the first is written (knn run --out t.csv --trace link-to-t.csv).
func TestCheckOutputsDanglingLink(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "t.csv")
	for _, target := range []string{"t.csv", out, "./sub/../t.csv"} {
		link := filepath.Join(dir, "link.csv")
		os.Remove(link)
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		os.Mkdir(filepath.Join(dir, "sub"), 0o755)
		err := CheckOutputs([]string{out, link}, nil)
		if err == nil || !strings.Contains(err.Error(), "name the same file") {
			t.Errorf("link to %s: %v, want the same file", target, err)
		}
	}
	if err := CheckOutputs([]string{out, filepath.Join(dir, "other.csv")}, nil); err != nil {
		t.Error(err)
	}
}

// A cancelled write leaves no file, temporary or final, behind.
func TestWriteCancelledLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	err := Write(ctx, filepath.Join(dir, "big.csv"), nil, func(w *bufio.Writer) error {
		for i := 0; ; i++ {
			if i == 1000 {
				cancel()
			}
			if _, err := w.WriteString(strings.Repeat("x", 1000)); err != nil {
				return err
			}
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Errorf("left behind: %v", names)
	}
}
