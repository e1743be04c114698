//go:build linux && (amd64 || arm64)

package mpi

import "github.com/ebitengine/purego"

func dlopen(path string) (uintptr, error) {
	// RTLD_GLOBAL: Open MPI loads its components as plugins that bind to
	// libmpi's symbols.
	return purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
}

func dlsym(h uintptr, name string) uintptr {
	p, err := purego.Dlsym(h, name)
	if err != nil {
		return 0
	}
	return p
}

// call calls the C function fn; every argument of the MPI functions bound
// here is an integer, a handle or a pointer.
//
//go:uintptrescapes
func call(fn uintptr, args ...uintptr) int {
	r, _, _ := purego.SyscallN(fn, args...)
	return int(int32(r))
}
