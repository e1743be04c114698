package parallel

import "unsafe"

// mallocgc is the runtime's allocator, reached by name as the runtime
// allows it (it keeps the name and signature for this: go.dev/issue/67401).
// typ nil asks for memory the collector does not scan.
//
//go:linkname mallocgc runtime.mallocgc
func mallocgc(size uintptr, typ unsafe.Pointer, needzero bool) unsafe.Pointer

// noZero is the element types Uncleared may return: no pointers, and
// every bit pattern a value (the collector never reads them; the caller
// writes each before anyone else does).
type noZero interface {
	~uint32 | ~float32 | ~uint64 | ~float64
}

// Uncleared is make([]T, n) without the runtime clearing the memory
// first. A plain query's result is written whole by the job loop's
// copies before the caller sees it, and the clearing make does is a
// single-threaded pass over every page on the call's critical path
// (the allocating goroutine); here the first write is the crews', spread
// over the cores. A result the query does not finish is dropped, never
// returned.
func Uncleared[T noZero](n int) []T {
	if n == 0 {
		return []T{}
	}
	var t T
	p := mallocgc(uintptr(n)*unsafe.Sizeof(t), nil, false)
	return unsafe.Slice((*T)(p), n)
}

// Written is memory for n values that the caller writes whole before
// anyone reads them (a query's answers): not cleared (Uncleared), and
// backed by the kernel on every core (Populate) before it returns, so
// that neither a clearing pass on one goroutine nor the first writes'
// page faults land on the query's path. Memory the collector recycled
// takes no faults; Populate then costs little. Below a MiB it is make's,
// cleared: cheaper there than starting the cores.
func Written[T noZero](n int) []T {
	var t T
	if uintptr(n)*unsafe.Sizeof(t) < 1<<20 {
		return make([]T, n)
	}
	s := Uncleared[T](n)
	Populate(s)()
	return s
}
