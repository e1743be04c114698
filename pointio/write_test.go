package pointio

import (
	"bufio"
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
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

func TestWriteResults(t *testing.T) {
	rows := []struct {
		ref uint32
		m   float64
	}{
		{17, 1523.25},
		{3, 0},
		{math.MaxUint32, 20015086.796020572}, // half the equator of the mean sphere
		{0, 0.0004999},
		{1, 0.0005},  // the double just above 0.0005: rounds up
		{2, 2.0025},  // the double just below 2.0025: rounds down
		{4, 1e-300},  // tiny
		{5, 1e15},    // beyond the fast path
		{6, 123.456}, //
		{7, math.Copysign(0, -1)},
	}
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	err := WriteResults(w, len(rows), func(i int) (uint32, float64) { return rows[i].ref, rows[i].m })
	if err != nil {
		t.Fatal(err)
	}
	want := "obs_index,ref_index,distance_m\n" +
		"0,17,1523.250\n" +
		"1,3,0.000\n" +
		"2,4294967295,20015086.796\n" +
		"3,0,0.000\n" +
		"4,1,0.001\n" +
		"5,2,2.002\n" +
		"6,4,0.000\n" +
		"7,5,1000000000000000.000\n" +
		"8,6,123.456\n" +
		"9,7,0.000\n"
	if got := buf.String(); got != want {
		t.Errorf("WriteResults wrote\n%s\nwant\n%s", got, want)
	}

	// No rows: the header only.
	buf.Reset()
	if err := WriteResults(w, 0, nil); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != ResultsHeader+"\n" {
		t.Errorf("WriteResults with no rows wrote %q", got)
	}
}

func TestWriteResultsErrors(t *testing.T) {
	for _, m := range []float64{-1, -1e-9, math.NaN(), math.Inf(1), math.Inf(-1)} {
		w := bufio.NewWriter(&bytes.Buffer{})
		err := WriteResults(w, 3, func(i int) (uint32, float64) {
			if i == 2 {
				return 0, m
			}
			return 0, 1
		})
		if err == nil || !strings.Contains(err.Error(), "observation 2") {
			t.Errorf("distance %v: error = %v, want one naming observation 2", m, err)
		}
	}

	if err := WriteResults(bufio.NewWriter(&bytes.Buffer{}), -1, nil); err == nil {
		t.Error("negative row count: no error")
	}

	// A failing writer is reported.
	fail := errors.New("disk full")
	w := bufio.NewWriterSize(failWriter{fail}, 16)
	if err := WriteResults(w, 100, func(int) (uint32, float64) { return 1, 1 }); !errors.Is(err, fail) {
		t.Errorf("failing writer: error = %v, want %v", err, fail)
	}
}

type failWriter struct{ err error }

func (f failWriter) Write([]byte) (int, error) { return 0, f.err }

// TestAppendMetresMatchesStrconv checks the fast formatting against
// strconv on random, boundary and tie values.
func TestAppendMetresMatchesStrconv(t *testing.T) {
	check := func(m float64) {
		t.Helper()
		got := string(appendMetres(nil, m))
		want := strconv.FormatFloat(m, 'f', 3, 64)
		if got != want {
			t.Fatalf("appendMetres(%v) = %s, strconv gives %s", m, got, want)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	n := 200_000
	if testing.Short() {
		n = 10_000
	}
	for range n {
		check(r.Float64() * 2.1e7)                                 // any distance on Earth
		check(r.Float64() * 10)                                    // short distances
		check(math.Ldexp(r.Float64(), r.IntN(120)-60))             // all magnitudes
		check(float64(r.IntN(2e10)) / 1000)                        // exact millimetres
		check((float64(r.IntN(2e10)) + 0.5) / 1000)                // ties in decimal
		check(math.Nextafter((float64(r.IntN(2e10))+0.5)/1000, 0)) // just below ties
	}
	for _, m := range []float64{
		5e-324, 1e-10, 0.0005, 0.0015, 0.0025, 1.0005, 999.9995, 999999.9995,
		9.999999999995e11, 1e12, math.Nextafter(1e12, 0), 1.5e12, 1e20, math.MaxFloat64,
		20015086.796020572, 4503599627370495.5, 9007199254740993,
	} {
		check(m)
		check(math.Nextafter(m, 0))
		check(math.Nextafter(m, math.Inf(1)))
	}
}
