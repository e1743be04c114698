package parallel

import "unsafe"

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
	if n == 0 {
		return s
	}
	var zero T
	bytes := n * int(unsafe.Sizeof(zero))
	if bytes == 0 {
		return s
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), bytes)
	adviseHuge(b)
	Blocks(bytes, 1<<21, 0, func(_, lo, hi int) {
		for i := lo; i < hi; i += pageBytes {
			b[i] = 0
		}
	})
	return s
}

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
