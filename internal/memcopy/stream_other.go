//go:build !amd64 || purego

package memcopy

import "unsafe"

// haveStream is false where the assembly is not built: Stream is copy.
const haveStream = false

// streamStores is never called here (haveStream is false).
func streamStores(dst, src unsafe.Pointer, n uintptr) {
	copy(unsafe.Slice((*byte)(dst), n), unsafe.Slice((*byte)(src), n))
}
