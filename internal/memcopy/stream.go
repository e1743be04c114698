package memcopy

import "unsafe"

// streamMin is the shortest copy Stream streams: shorter ones save too
// few line reads to pay for the fence that ends every streamed copy.
const streamMin = 4 << 10

// streamAlign is the destination alignment of the streaming stores (one
// YMM register), and streamChunk the bytes one loop of them writes.
const (
	streamAlign = 32
	streamChunk = 128
)

// Stream copies min(len(dst), len(src)) bytes from src to dst, as copy
// does, bypassing the cache for the destination where it can; the ranges
// must not overlap. It returns the bytes copied.
func Stream(dst, src []byte) int {
	n := min(len(dst), len(src))
	if !haveStream || n < streamMin {
		return copy(dst, src[:n])
	}
	head := int(-uintptr(unsafe.Pointer(unsafe.SliceData(dst)))) & (streamAlign - 1)
	copy(dst[:head], src[:head])
	body := (n - head) &^ (streamChunk - 1)
	streamStores(unsafe.Pointer(&dst[head]), unsafe.Pointer(&src[head]), uintptr(body))
	copy(dst[head+body:n], src[head+body:n])
	return n
}
