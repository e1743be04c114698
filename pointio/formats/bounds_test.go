package formats

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/geoknn/geoknn/pointio"
)

// allocatedDuring is the bytes f allocates.
func allocatedDuring(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
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
		alloc := allocatedDuring(func() { _, _, err = ReadFileIDs(context.Background(), path, pointio.ReadOptions{}) })
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
		_, _, err := ReadReaderIDs(ctx, pointio.CancelReader(ctx, r), "-", pointio.ReadOptions{})
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
