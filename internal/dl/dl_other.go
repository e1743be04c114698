//go:build !(linux && (amd64 || arm64))

package dl

import (
	"errors"
	"runtime"
)

// ErrUnsupported is Open's error where the binding is not built.
var ErrUnsupported = errors.New("run-time library loading not available on " + runtime.GOOS + "/" + runtime.GOARCH)

func Open(string) (uintptr, error) { return 0, ErrUnsupported }

func Sym(uintptr, string) uintptr { return 0 }

func Close(uintptr) {}

// Call is never reached: Open cannot succeed on this platform.
func Call(uintptr, ...uintptr) uintptr { return ^uintptr(0) }
