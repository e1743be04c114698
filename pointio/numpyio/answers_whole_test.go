package numpyio

import (
	"archive/zip"
	"bytes"
	"io"
	"strings"
	"testing"
)

// The k nearest as arrays of shape (n, k), missing ones included.
func TestWriteKResultsNPZ(t *testing.T) {
	row := func(i, r int) (uint32, float64, bool) {
		if i == 1 && r > 0 { // beyond the limit
			return 0, 0, false
		}
		return uint32(10*i + r), float64(i) + float64(r)/2, true
	}
	var b bytes.Buffer
	if err := WriteKResultsNPZ(&b, 2, 2, row); err != nil {
		t.Fatal(err)
	}
	headers := npzHeaders(t, b.Bytes())
	if !strings.Contains(headers["ref_index.npy"], "'shape': (2, 2)") || !strings.Contains(headers["distance_m.npy"], "'<f8'") {
		t.Errorf("headers %q", headers)
	}
}

// Radius lists as compressed rows: counts, offsets, index, distance.
func TestWriteWithinNPZ(t *testing.T) {
	counts, offsets, index := []uint32{2, 0, 1}, []uint64{0, 2, 2, 3}, []uint32{7, 3, 9}
	var b bytes.Buffer
	if err := WriteWithinNPZ(&b, counts, offsets, index, func(e int) float64 { return float64(e) }); err != nil {
		t.Fatal(err)
	}
	if h := npzHeaders(t, b.Bytes()); !strings.Contains(h["offsets.npy"], "'shape': (4,)") || len(h) != 4 {
		t.Errorf("headers %q", h)
	}
}

// npzHeaders returns each array's NPY header text.
func npzHeaders(t *testing.T, data []byte) map[string]string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range zr.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r)
		out[f.Name] = string(b[:min(len(b), 128)])
	}
	return out
}
