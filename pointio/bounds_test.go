package pointio

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// allocatedDuring is the bytes f allocates.
func allocatedDuring(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// npzOf writes an archive of members (name, shape, data values).
func npzOf(t *testing.T, members ...struct {
	name, shape string
	n           int
}) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "a.npz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, m := range members {
		w, err := zw.Create(m.name + ".npy")
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, npyHeaderShape("<f8", m.shape))
		for i := range m.n {
			binary.Write(w, binary.LittleEndian, math.Float64bits(float64(i%80)))
		}
	}
	zw.Close()
	f.Close()
	return path
}

// An archive's members are checked against each other and against the
// zip directory's sizes before either is allocated.
func TestNPZMembersCheckedFirst(t *testing.T) {
	type m = struct {
		name, shape string
		n           int
	}
	for _, tc := range []struct {
		members []m
		want    string
	}{
		{[]m{{"lat", "(536870912,)", 4}, {"lon", "(536870912,)", 0}}, "more than the archive's"},
		{[]m{{"lat", "(10,)", 10}, {"lon", "(11,)", 11}}, "10 latitudes and 11 longitudes"},
		{[]m{{"lat", "(3,)", 3}, {"lon", "(536870912,)", 3}}, "lon: the header declares 536870912 values"},
	} {
		path := npzOf(t, tc.members...)
		var err error
		alloc := allocatedDuring(func() { _, _, err = ReadFileIDs(context.Background(), path, ReadOptions{}) })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.members, err, tc.want)
		}
		if alloc > 64<<20 {
			t.Errorf("%v: %d MiB allocated before refusing", tc.members, alloc>>20)
		}
	}
}

// A header naming shape twice takes the last, as NumPy does.
func TestNPYDuplicateShapeKey(t *testing.T) {
	a, err := parseNPYHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (9, 2), 'shape': (3, 2), }")
	if err != nil || len(a.shape) != 2 || a.shape[0] != 3 {
		t.Fatalf("shape %v, %v: want the last, (3, 2)", a.shape, err)
	}
}

// A CSV line longer than 1 MiB is refused with its line, after reading
// about that much (gzip included), not held whole.
func TestCSVLongLineRefused(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("1", 8<<20)
	for _, tc := range []struct {
		name, body, want string
	}{
		{"data.csv.gz", "lat,lon\n1,2\n" + long + ",2\n", ":3: a record longer than 1 MiB"},
		{"header.csv.gz", long + "\n1,2\n", ":1: a line longer than 1 MiB"},
		{"quote.csv", "lat,lon\n1,2\n\"" + long[:3<<20] + "\n", ":3: a record longer than 1 MiB"},
	} {
		var buf bytes.Buffer
		if strings.HasSuffix(tc.name, ".gz") {
			zw := gzip.NewWriter(&buf)
			io.WriteString(zw, tc.body)
			zw.Close()
		} else {
			buf.WriteString(tc.body)
		}
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		var err error
		alloc := allocatedDuring(func() { _, _, err = ReadFileIDs(context.Background(), path, ReadOptions{}) })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
		if alloc > 32<<20 {
			t.Errorf("%s: %d MiB allocated before refusing", tc.name, alloc>>20)
		}
	}
}

// A read of a pipe that has gone quiet returns once the context is done.
func TestCancelReaderQuietPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	defer r.Close()
	w.WriteString("lat,lon\n1,2\n")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := ReadReaderIDs(ctx, CancelReader(ctx, r), "-", ReadOptions{})
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err != context.Canceled {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the read did not return once cancelled")
	}
}

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
