//go:build !(linux && (amd64 || arm64))

package cuda

import (
	"errors"
	"runtime"
)

func libcudaNames() []string { return []string{"libcuda.so.1"} }

func dlopen(string) (uintptr, error) {
	return 0, errors.New("CUDA driver binding not available on " + runtime.GOOS + "/" + runtime.GOARCH)
}

func dlsym(uintptr, string) uintptr { return 0 }

func dlclose(uintptr) {}

// syscallN is never reached: Load cannot succeed on this platform.
func syscallN(uintptr, ...uintptr) uintptr { return uintptr(ErrorNotSupported) }
