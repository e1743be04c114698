//go:build amd64 && !purego

package memcopy

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// haveStream: the CPU and the OS support AVX2 (x/sys/cpu checks both).
var haveStream = cpu.X86.HasAVX2

// streamStores copies n bytes (a multiple of streamChunk) from src to
// dst (streamAlign-aligned) with unaligned 32-byte loads and non-temporal
// 32-byte stores, then fences the stores (SFENCE) so that they are
// ordered before anything the caller does next, such as telling another
// goroutine the copy is done. Its Go equivalent is copy(dst[:n], src[:n]).
//
//go:noescape
func streamStores(dst, src unsafe.Pointer, n uintptr)
