package gpu

import (
	"testing"
	"unsafe"
)

// A copy may not span two registrations: spans splits a range where it
// passes from one registered chunk to the next, and leaves other ranges
// whole.
func TestSpansSplitAtRegisteredChunks(t *testing.T) {
	mem := make([]byte, 3*registerChunk+100)
	base := unsafe.Pointer(&mem[0])
	var h hostAllocs
	h.addChunks(base, len(mem), []unsafe.Pointer{base, unsafe.Add(base, registerChunk),
		unsafe.Add(base, 2*registerChunk), unsafe.Add(base, 3*registerChunk)})
	for _, tc := range []struct {
		off, bytes int
		want       []int // the spans' sizes
	}{
		{0, 100, []int{100}},
		{registerChunk - 10, 30, []int{10, 20}},
		{5, 3 * registerChunk, []int{registerChunk - 5, registerChunk, registerChunk, 5}},
		{registerChunk, registerChunk, []int{registerChunk}},
	} {
		got := h.spans(unsafe.Add(base, tc.off), tc.bytes)
		if len(got) != len(tc.want) {
			t.Fatalf("spans(%d, %d): %d spans, want %d", tc.off, tc.bytes, len(got), len(tc.want))
		}
		at := 0
		for i, sp := range got {
			if sp.bytes != tc.want[i] || sp.off != at || sp.p != unsafe.Add(base, tc.off+at) {
				t.Errorf("spans(%d, %d)[%d] = %+v, want %d bytes at %d", tc.off, tc.bytes, i, sp, tc.want[i], at)
			}
			at += sp.bytes
		}
	}
	other := make([]byte, 10)
	if got := h.spans(unsafe.Pointer(&other[0]), 10); len(got) != 1 || got[0].bytes != 10 {
		t.Errorf("unregistered range: %+v, want one span", got)
	}
	if got := (*hostAllocs)(nil).spans(base, 5*registerChunk); len(got) != 1 {
		t.Errorf("no registrations: %d spans, want 1", len(got))
	}
}
