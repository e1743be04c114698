package pointio

import (
	"bytes"
	"errors"
	"strconv"
	"testing"
)

// Blocks come out in order, whatever the rounds, cores and block sizes.
func TestWriteBlocksInOrder(t *testing.T) {
	for _, tc := range []struct{ n, block int }{{0, 10}, {1, 10}, {999, 10}, {100000, 7}, {65536, 65536}} {
		var want, got bytes.Buffer
		for i := range tc.n {
			want.WriteString(strconv.Itoa(i) + "\n")
		}
		err := WriteBlocks(&got, tc.n, tc.block, func(dst []byte, lo, hi int) ([]byte, error) {
			for i := lo; i < hi; i++ {
				dst = strconv.AppendInt(dst, int64(i), 10)
				dst = append(dst, '\n')
			}
			return dst, nil
		})
		if err != nil || !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("n %d, block %d: %v, %d bytes, want %d", tc.n, tc.block, err, got.Len(), want.Len())
		}
	}
}

type failingWriter struct{ after int }

func (f *failingWriter) Write(b []byte) (int, error) {
	if f.after -= len(b); f.after < 0 {
		return 0, errors.New("disk full")
	}
	return len(b), nil
}

// An encoding error or a write error stops the output and comes back.
func TestWriteBlocksErrors(t *testing.T) {
	enc := func(dst []byte, lo, hi int) ([]byte, error) {
		if lo >= 5000 {
			return dst, errors.New("bad row")
		}
		return append(dst, make([]byte, hi-lo)...), nil
	}
	if err := WriteBlocks(&bytes.Buffer{}, 100000, 100, enc); err == nil || err.Error() != "bad row" {
		t.Errorf("encode error: %v", err)
	}
	ok := func(dst []byte, lo, hi int) ([]byte, error) { return append(dst, make([]byte, hi-lo)...), nil }
	if err := WriteBlocks(&failingWriter{after: 50000}, 100000, 100, ok); err == nil || err.Error() != "disk full" {
		t.Errorf("write error: %v", err)
	}
}
