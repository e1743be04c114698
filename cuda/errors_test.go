package cuda

import (
	"errors"
	"fmt"
	"regexp"
	"testing"
)

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		name string
		err  *Error
		want string
	}{
		{"full", &Error{Op: "cuMemAlloc_v2", Code: 2, Name: "CUDA_ERROR_OUT_OF_MEMORY", Msg: "out of memory"},
			"cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"},
		{"no op", &Error{Code: 1, Name: "CUDA_ERROR_INVALID_VALUE", Msg: "invalid argument"},
			"CUDA_ERROR_INVALID_VALUE (invalid argument)"},
		{"no msg", &Error{Op: "cuInit", Code: 100, Name: "CUDA_ERROR_NO_DEVICE"},
			"cuInit: CUDA_ERROR_NO_DEVICE"},
		{"name from code", &Error{Op: "cuInit", Code: 100},
			"cuInit: CUDA_ERROR_NO_DEVICE"},
		{"table", newError("cuMemAlloc_v2", ErrorOutOfMemory),
			"cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"},
		{"table ptx", newError("cuModuleLoadDataEx", ErrorInvalidPTX),
			"cuModuleLoadDataEx: CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)"},
		{"unknown code", newError("cuFoo", 12345), "cuFoo: CUDA_ERROR_12345"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestResultTable(t *testing.T) {
	name := regexp.MustCompile(`^CUDA_(SUCCESS|ERROR_[A-Z0-9_]+)$`)
	codes := map[Result]bool{}
	names := map[string]bool{}
	for _, e := range resultTable() {
		if codes[e.code] {
			t.Errorf("code %d listed twice", e.code)
		}
		if names[e.name] {
			t.Errorf("name %s listed twice", e.name)
		}
		codes[e.code], names[e.name] = true, true
		if !name.MatchString(e.name) {
			t.Errorf("code %d: malformed name %q", e.code, e.name)
		}
		if e.msg == "" {
			t.Errorf("%s: empty message", e.name)
		}
		if got := e.code.String(); got != e.name {
			t.Errorf("Result(%d).String() = %q, want %q", e.code, got, e.name)
		}
	}
	// Every exported Result constant must be described by the table.
	for _, c := range []Result{Success, ErrorInvalidValue, ErrorOutOfMemory, ErrorNotInitialized,
		ErrorDeinitialized, ErrorStubLibrary, ErrorDeviceUnavailable, ErrorNoDevice, ErrorInvalidDevice,
		ErrorInvalidImage, ErrorInvalidContext, ErrorNoBinaryForGPU, ErrorInvalidPTX,
		ErrorUnsupportedPTXVersion, ErrorInvalidHandle, ErrorNotFound, ErrorNotReady,
		ErrorIllegalAddress, ErrorLaunchOutOfResources, ErrorLaunchTimeout, ErrorLaunchFailed,
		ErrorNotPermitted, ErrorNotSupported, ErrorSystemDriverMismatch, ErrorUnknown} {
		if !codes[c] {
			t.Errorf("constant %d missing from resultTable", c)
		}
	}
}

func TestResultString(t *testing.T) {
	tests := []struct {
		r    Result
		want string
	}{
		{Success, "CUDA_SUCCESS"},
		{ErrorOutOfMemory, "CUDA_ERROR_OUT_OF_MEMORY"},
		{ErrorLaunchFailed, "CUDA_ERROR_LAUNCH_FAILED"},
		{ErrorIllegalAddress, "CUDA_ERROR_ILLEGAL_ADDRESS"},
		{ErrorUnknown, "CUDA_ERROR_UNKNOWN"},
		{-3, "CUDA_ERROR_-3"},
	}
	for _, tt := range tests {
		if got := tt.r.String(); got != tt.want {
			t.Errorf("Result(%d).String() = %q, want %q", int32(tt.r), got, tt.want)
		}
	}
}

func TestIsOutOfMemory(t *testing.T) {
	oom := newError("cuMemAlloc_v2", ErrorOutOfMemory)
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"bare", oom, true},
		{"wrapped", fmt.Errorf("cuda: alloc 8 bytes: %w", oom), true},
		{"joined", errors.Join(errors.New("x"), oom), true},
		{"other code", newError("cuMemAlloc_v2", ErrorInvalidValue), false},
		{"plain error", errors.New("out of memory"), false},
		{"no driver", fmt.Errorf("cuda: %w", ErrNoDriver), false},
	}
	for _, tt := range tests {
		if got := IsOutOfMemory(tt.err); got != tt.want {
			t.Errorf("%s: IsOutOfMemory = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestErrorAs(t *testing.T) {
	err := fmt.Errorf("cuda: load PTX: %w; JIT log:\n%s", newError("cuModuleLoadDataEx", ErrorInvalidPTX), "ptxas error")
	var e *Error
	if !errors.As(err, &e) || e.Code != ErrorInvalidPTX || e.Op != "cuModuleLoadDataEx" {
		t.Fatalf("errors.As = %v, %+v", errors.As(err, &e), e)
	}
}

func TestSymbolError(t *testing.T) {
	err := &SymbolError{Lib: "libcuda.so.1", Missing: []string{"cuMemAdvise_v2", "cuEventElapsedTime_v2 or cuEventElapsedTime"}}
	want := "cuda: libcuda.so.1 lacks symbol cuMemAdvise_v2, cuEventElapsedTime_v2 or cuEventElapsedTime (driver too old, or not libcuda?)"
	if got := err.Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if errors.Is(err, ErrNoDriver) {
		t.Error("a SymbolError must not read as ErrNoDriver: it is a bug or an unsupported driver")
	}
}
