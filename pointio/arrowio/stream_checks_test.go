package arrowio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/internal/readertest"
	"github.com/geoknn/geoknn/stream"
	"github.com/paulmach/orb"
)

// parquetOf is 1000 points written as Parquet, and its footer's bounds.
func parquetOf(t *testing.T) (b []byte, footer int) {
	t.Helper()
	pts := readertest.GridPoints(1000)
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	if err := WritePoints(w, pointio.FormatParquet, pts); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	b = buf.Bytes()
	n := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
	return b, len(b) - 8 - n
}

// readStreamed reads path through the streamed reader, as knn run does.
func readStreamed(path string) (int, error) {
	ctx := context.Background()
	r, err := OpenChunks(ctx, path, pointio.ReadOptions{}, 100)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	n := 0
	for {
		c, err := r.Next(ctx, stream.Chunk{})
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n += c.Len()
	}
}

func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// bothRefuse checks that the whole-file and the streamed reader refuse
// path with an error holding want.
func bothRefuse(t *testing.T, path, want string) {
	t.Helper()
	if _, _, err := ReadFileIDs(context.Background(), path, pointio.ReadOptions{}); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("whole file: err = %v, want %q", err, want)
	}
	if n, err := readStreamed(path); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("streamed: %d rows, err = %v, want %q", n, err, want)
	}
}

// The streamed reader refuses a row group claiming fewer rows than its
// columns hold, as the whole-file reader does (#41 F6).
func TestStreamParquetRowGroupRows(t *testing.T) {
	b, footer := parquetOf(t)
	at := bytes.LastIndex(b[footer:], []byte{0x16, 0xd0, 0x0f})
	b[footer+at+1] = 0xce // 999
	bothRefuse(t, writeTemp(t, "rg999.parquet", b), "row group 0 declares 999 rows")
}

// A footer whose num_rows is not its row groups' (a group dropped) is
// refused by both readers (#41 F6).
func TestStreamParquetFooterRows(t *testing.T) {
	b, footer := parquetOf(t)
	at := bytes.Index(b[footer:], []byte{0x16, 0xd0, 0x0f})
	b[footer+at+1] = 0xce
	bothRefuse(t, writeTemp(t, "footer999.parquet", b), "footer declares 999 rows")
}

// columnSizes is where the first column chunk's total_compressed_size
// varint starts in the footer: after num_values (field 5, 1000) come
// total_uncompressed_size and total_compressed_size (fields 6 and 7).
func columnSizes(t *testing.T, b []byte, footer int) int {
	t.Helper()
	at := bytes.Index(b[footer:], []byte{0x16, 0xd0, 0x0f, 0x16})
	if at < 0 {
		t.Fatal("no num_values 1000 in the footer")
	}
	p := footer + at + 4
	for b[p]&0x80 != 0 { // total_uncompressed_size
		p++
	}
	p++
	if b[p] != 0x16 {
		t.Fatalf("no total_compressed_size at %d", p)
	}
	return p + 1
}

// A negative column chunk size (once a makeslice panic) and one larger
// than the file (once a 17 GB allocation) are refused from the footer,
// before any page is read (#41 C2).
func TestParquetColumnSizeBounds(t *testing.T) {
	b, footer := parquetOf(t)
	p := columnSizes(t, b, footer)
	neg := bytes.Clone(b)
	neg[p] |= 1 // zigzag: odd is negative
	bothRefuse(t, writeTemp(t, "neg.parquet", neg), "corrupt Parquet file: row group 0 column")
}

// A Parquet file cut short (its column chunks past the end, the footer
// kept, as a file claiming a 16 GB chunk in 19 KB) is refused by both
// readers from the footer, never read as fewer rows (#41 F1, C2).
func TestParquetTruncatedData(t *testing.T) {
	b, footer := parquetOf(t)
	cut := append(bytes.Clone(b[:footer/2]), b[footer:]...)
	bothRefuse(t, writeTemp(t, "cut.parquet", cut), "-byte file")
}

// Reading in batches ends with an error, not io.EOF, when rows are
// missing; an Arrow IPC file likewise (#41 F1).
func TestStreamEndsOnlyWhenComplete(t *testing.T) {
	if err := batchesEnd("x.parquet", 900, 1000); err == io.EOF || err == nil || !strings.Contains(err.Error(), "row 900 of 1000") {
		t.Errorf("batchesEnd short: %v", err)
	}
	if err := batchesEnd("x.parquet", 1000, 1000); err != io.EOF {
		t.Errorf("batchesEnd complete: %v", err)
	}
	if err := ipcEnd("x.arrow", 1915, 2000); err == io.EOF || err == nil {
		t.Errorf("ipcEnd short: %v", err)
	}
	if err := ipcEnd("x.arrow", 2000, 2000); err != io.EOF {
		t.Errorf("ipcEnd complete: %v", err)
	}
}

// addTestdata adds the third-party files matching glob to the corpus.
func addTestdata(f *testing.F, glob string) {
	paths, _ := filepath.Glob(filepath.Join("testdata", glob))
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
}

// checkStreamAgrees checks that the streamed reader (knn run's) reads
// what the whole-file reader read, or refuses what it refused: a file
// one path refuses is never half-read by the other (#41).
func checkStreamAgrees(t *testing.T, path string, pts []orb.Point, wholeErr error) {
	t.Helper()
	n, err := readStreamed(path)
	switch {
	case wholeErr == nil && err != nil:
		t.Fatalf("whole file read %d points, streamed refused: %v", len(pts), err)
	case wholeErr == nil && n != len(pts):
		t.Fatalf("whole file read %d points, streamed %d", len(pts), n)
	case wholeErr != nil && err == nil:
		t.Fatalf("whole file refused (%v), streamed read %d points", wholeErr, n)
	}
	if err != nil && strings.Contains(err.Error(), "runtime error") {
		t.Fatalf("streamed: %v", err)
	}
}

// Byte flips in pyarrow's Arrow file give the same points or the same
// refusal on both paths, never a panic nor runtime text: a flip in the
// footer (byte 21127) once panicked out of the streamed reader, whose
// recover was in a function its deferred one called, and a flip at byte
// 296 showed "runtime error: slice bounds out of range" (#41 C3).
func TestArrowByteFlips(t *testing.T) {
	b, err := os.ReadFile("testdata/airports_pyarrow.feather")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	at := []int{296, 21127}
	for i := 0; i < len(b); i += 211 {
		at = append(at, i)
	}
	for _, i := range at {
		for _, x := range []byte{0xff, 0x01} {
			c := bytes.Clone(b)
			c[i] ^= x
			p := filepath.Join(dir, "f.arrow")
			if err := os.WriteFile(p, c, 0o644); err != nil {
				t.Fatal(err)
			}
			pts, err := ReadFile(context.Background(), p)
			if err != nil && strings.Contains(err.Error(), "runtime error") {
				t.Errorf("byte %d ^%#x: %v", i, x, err)
			}
			checkStreamAgrees(t, p, pts, err)
		}
	}
}
