//go:build !(linux && (amd64 || arm64))

package mpi

import (
	"errors"
	"runtime"
)

func dlopen(string) (uintptr, error) {
	return 0, errors.New("MPI binding not available on " + runtime.GOOS + "/" + runtime.GOARCH)
}

func dlsym(uintptr, string) uintptr { return 0 }

func call(uintptr, ...uintptr) int { return -1 }
