package parallel

import (
	"sync/atomic"
	"unsafe"
)

// pageBytes is the stride at which Touched writes: the smallest page size.
const pageBytes = 4096

// Touched returns a zeroed slice of n T whose memory is already backed by
// the kernel: asked for as huge pages where the system allows it (one fault
// a 2 MiB page instead of 512), then written once a page on every core. The
// first write to fresh memory costs a page fault, about 0.1 s a GiB on one
// core and more inside a virtual machine; a large answer array filled by
// the GPUs' copies would otherwise take those faults on the query's
// critical path, on the one thread that copies.
func Touched[T any](n int) []T {
	s := make([]T, n)
	b := bytesOf(s)
	if len(b) == 0 {
		return s
	}
	adviseHuge(b)
	Blocks(len(b), 1<<21, 0, func(_, lo, hi int) {
		for i := lo; i < hi; i += pageBytes {
			b[i] = 0
		}
	})
	return s
}

// Huge returns a zeroed slice of n T whose memory is asked for as huge
// pages where the system allows, not touched: columns that goroutines
// fill as data arrives then take one fault a 2 MiB page instead of 512.
// (A GPU stream's readers on one H200 host, THP "madvise": Parquet read
// busy 0.11 s with it, 0.55 s without, the early chunks the slowest.)
func Huge[T any](n int) []T {
	s := make([]T, n)
	adviseHuge(bytesOf(s))
	return s
}

// Grown is s with n entries and room for at least room, made anew by
// Huge when s has less room (what s held is not kept).
func Grown[T any](s []T, n, room int) []T {
	if cap(s) >= max(n, room) {
		return s[:n]
	}
	return Huge[T](max(n, room))[:n]
}

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// bytesOf is s's memory as bytes (nil for none).
func bytesOf[T any](s []T) []byte {
	var zero T
	n := len(s) * int(unsafe.Sizeof(zero))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), n)
}

// Populate backs the memory of s with pages on every core, as huge pages
// where the system allows, without writing it: memory fresh from the
// allocator (not cleared) that other goroutines start writing at once,
// whose writes then fault less or not at all. It returns at once; wait
// returns once every page is backed (or the kernel refused: the writes
// then fault as before).
func Populate[T any](s []T) (wait func()) {
	b := bytesOf(s)
	if len(b) == 0 {
		return func() {}
	}
	adviseHuge(b)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var refused atomic.Bool
		Blocks(len(b), 1<<21, 0, func(_, lo, hi int) {
			if !refused.Load() && !populate(b[lo:hi]) {
				refused.Store(true)
			}
		})
	}()
	return func() { <-done }
}
