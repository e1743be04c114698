package numpyio

import (
	"hash/crc32"
	"testing"
)

// The combined CRC of two parts is the CRC of the whole, for parts of
// every length from 0 up past a few shifts' worth.
func TestCRC32Combine(t *testing.T) {
	data := make([]byte, 3000)
	for i := range data {
		data[i] = byte(i*7 + i/13)
	}
	for _, cut := range []int{0, 1, 2, 3, 7, 64, 1000, 2999, 3000} {
		a, b := data[:cut], data[cut:]
		got := crc32Combine(crc32.ChecksumIEEE(a), crc32.ChecksumIEEE(b), int64(len(b)))
		if want := crc32.ChecksumIEEE(data); got != want {
			t.Errorf("cut at %d: %08x, want %08x", cut, got, want)
		}
	}
}
