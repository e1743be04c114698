package numpyio

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"regexp"
	"strconv"
	"testing"
)

// readNPY parses one NPY 1.0 array as WriteResultsNPZ writes them.
func readNPYEntry(t *testing.T, f *zip.File) (descr string, n int, data []byte) {
	t.Helper()
	rc, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if string(b[:8]) != "\x93NUMPY\x01\x00" {
		t.Fatalf("%s: bad magic %q", f.Name, b[:8])
	}
	hl := int(binary.LittleEndian.Uint16(b[8:10]))
	if (10+hl)%64 != 0 || b[10+hl-1] != '\n' {
		t.Fatalf("%s: header of %d bytes is not padded to 64 with a final newline", f.Name, hl)
	}
	m := regexp.MustCompile(`^\{'descr': '([<>a-z0-9]+)', 'fortran_order': False, 'shape': \((\d+),\), \} *\n$`).FindSubmatch(b[10 : 10+hl])
	if m == nil {
		t.Fatalf("%s: header %q", f.Name, b[10:10+hl])
	}
	n, _ = strconv.Atoi(string(m[2]))
	return string(m[1]), n, b[10+hl:]
}

func TestWriteResultsNPZ(t *testing.T) {
	for _, n := range []int{0, 1, 3, 1<<16 + 5} {
		var buf bytes.Buffer
		answer := func(i int) (uint32, float64) { return uint32(7 * i), float64(i) * 1.5 }
		if err := WriteResultsNPZ(&buf, n, answer); err != nil {
			t.Fatal(err)
		}
		zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		if len(zr.File) != 2 || zr.File[0].Name != "ref_index.npy" || zr.File[1].Name != "distance_m.npy" {
			t.Fatalf("n=%d: archive holds %d files", n, len(zr.File))
		}
		descr, got, data := readNPYEntry(t, zr.File[0])
		if descr != "<i4" || got != n || len(data) != 4*n {
			t.Fatalf("ref_index: %s, %d entries, %d bytes", descr, got, len(data))
		}
		for i := 0; i < n; i++ {
			if v := binary.LittleEndian.Uint32(data[4*i:]); v != uint32(7*i) {
				t.Fatalf("ref_index[%d] = %d", i, v)
			}
		}
		descr, got, data = readNPYEntry(t, zr.File[1])
		if descr != "<f8" || got != n || len(data) != 8*n {
			t.Fatalf("distance_m: %s, %d entries, %d bytes", descr, got, len(data))
		}
		for i := 0; i < n; i++ {
			if v := math.Float64frombits(binary.LittleEndian.Uint64(data[8*i:])); v != float64(i)*1.5 {
				t.Fatalf("distance_m[%d] = %v", i, v)
			}
		}
	}
}
