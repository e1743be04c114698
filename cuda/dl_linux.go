//go:build linux && (amd64 || arm64)

package cuda

import "github.com/ebitengine/purego"

// libcudaNames are tried in order: the versioned soname the driver installs,
// then the development symlink some containers provide instead.
func libcudaNames() []string { return []string{"libcuda.so.1", "libcuda.so"} }

func dlopen(path string) (uintptr, error) {
	// RTLD_NOW surfaces a broken install at Load rather than at first call;
	// RTLD_GLOBAL lets libraries loaded later (libnvrtc, ...) bind to it.
	return purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
}

func dlsym(h uintptr, name string) uintptr {
	p, err := purego.Dlsym(h, name)
	if err != nil {
		return 0
	}
	return p
}

func dlclose(h uintptr) { _ = purego.Dlclose(h) }

// syscallN calls the C function fn. Every argument of the functions bound
// here is an integer or a pointer, which purego passes in integer
// registers and stack slots exactly as the C ABI does.
//
//go:uintptrescapes
func syscallN(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}
