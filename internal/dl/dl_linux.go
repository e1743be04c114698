//go:build linux && (amd64 || arm64)

package dl

import "github.com/ebitengine/purego"

// Open loads the library at path (a file name or path) with RTLD_NOW, so a
// broken install shows at Open rather than at the first call, and
// RTLD_GLOBAL, so libraries it loads later (CUDA's libnvrtc, Open MPI's
// components) bind to its symbols.
func Open(path string) (uintptr, error) {
	return purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
}

// Sym is the address of name in the library h, or 0.
func Sym(h uintptr, name string) uintptr {
	p, err := purego.Dlsym(h, name)
	if err != nil {
		return 0
	}
	return p
}

// Close unloads the library h.
func Close(h uintptr) { _ = purego.Dlclose(h) }

// Call calls the C function fn and returns its result register.
//
//go:uintptrescapes
func Call(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}
