package memcopy

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// Every length around the thresholds, at every destination and source
// misalignment within a vector, copies the same bytes as copy and touches
// nothing beyond them.
func TestStreamCopiesExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]byte, 3*streamMin+2*streamChunk)
	for i := range src {
		src[i] = byte(rng.Uint32())
	}
	lengths := []int{0, 1, 31, streamMin - 1, streamMin, streamMin + 1, streamMin + streamChunk - 1, 2*streamMin + 77, 3 * streamMin}
	for _, n := range lengths {
		for dOff := range streamAlign + 1 {
			for _, sOff := range []int{0, 1, 7, 31} {
				dst := bytes.Repeat([]byte{0xa5}, n+2*streamAlign+streamChunk)
				got := Stream(dst[dOff:dOff+n], src[sOff:sOff+n])
				if got != n {
					t.Fatalf("n %d: copied %d", n, got)
				}
				if !bytes.Equal(dst[dOff:dOff+n], src[sOff:sOff+n]) {
					t.Fatalf("n %d, dst +%d, src +%d: bytes differ", n, dOff, sOff)
				}
				for i, b := range append(dst[:dOff:dOff], dst[dOff+n:]...) {
					if b != 0xa5 {
						t.Fatalf("n %d, dst +%d, src +%d: byte %d outside the copy written", n, dOff, sOff, i)
					}
				}
			}
		}
	}
}

// Unequal lengths copy the shorter, as copy does.
func TestStreamShorter(t *testing.T) {
	src, dst := make([]byte, 3*streamMin), make([]byte, 2*streamMin+5)
	for i := range src {
		src[i] = byte(i)
	}
	if n := Stream(dst, src); n != len(dst) || !bytes.Equal(dst, src[:len(dst)]) {
		t.Fatalf("copied %d", n)
	}
	if n := Stream(src[:10], dst[:3]); n != 3 {
		t.Fatalf("copied %d, want 3", n)
	}
}

// BenchmarkStream copies 256 MiB, far beyond any cache, in 1 MiB pieces
// (as the GPU engine's host crew does), by copy and by Stream.
func BenchmarkStream(b *testing.B) {
	const size, piece = 256 << 20, 1 << 20
	src, dst := make([]byte, size), make([]byte, size)
	for i := range src {
		src[i] = byte(i * 7)
	}
	copy(dst, src) // back every page
	for _, c := range []struct {
		name string
		fn   func(dst, src []byte) int
	}{{"copy", func(d, s []byte) int { return copy(d, s) }}, {"stream", Stream}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				for lo := 0; lo < size; lo += piece {
					c.fn(dst[lo:lo+piece], src[lo:lo+piece])
				}
			}
		})
	}
}
