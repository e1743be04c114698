package cuda

import (
	"errors"
	"strconv"
	"strings"
)

// ErrNoDriver reports that no usable CUDA driver is present: libcuda could
// not be opened, or cuInit failed (no device, stub library, driver/kernel
// module mismatch, ...). Callers test for it with errors.Is and fall back
// to the CPU. Methods called on a nil *Driver return it too.
var ErrNoDriver = errors.New("no usable CUDA driver")

// Result is a CUDA driver API status code (CUresult).
type Result int32

// Common result codes, numbered as in cuda.h.
const (
	Success                    Result = 0
	ErrorInvalidValue          Result = 1
	ErrorOutOfMemory           Result = 2
	ErrorNotInitialized        Result = 3
	ErrorDeinitialized         Result = 4
	ErrorStubLibrary           Result = 34
	ErrorDeviceUnavailable     Result = 46
	ErrorNoDevice              Result = 100
	ErrorInvalidDevice         Result = 101
	ErrorInvalidImage          Result = 200
	ErrorInvalidContext        Result = 201
	ErrorNoBinaryForGPU        Result = 209
	ErrorInvalidPTX            Result = 218
	ErrorUnsupportedPTXVersion Result = 222
	ErrorInvalidHandle         Result = 400
	ErrorNotFound              Result = 500
	ErrorNotReady              Result = 600
	ErrorIllegalAddress        Result = 700
	ErrorLaunchOutOfResources  Result = 701
	ErrorLaunchTimeout         Result = 702
	ErrorLaunchFailed          Result = 719
	ErrorNotPermitted          Result = 800
	ErrorNotSupported          Result = 801
	ErrorSystemDriverMismatch  Result = 803
	ErrorUnknown               Result = 999
)

// resultInfo is a row of the built-in result table.
type resultInfo struct {
	code      Result
	name, msg string
}

// resultTable describes the common result codes the way cuGetErrorName and
// cuGetErrorString do. It names errors when the driver is absent or does
// not know a code, and tests check it against the live driver. It is a
// function so the table cannot be mutated.
func resultTable() []resultInfo {
	return []resultInfo{
		{0, "CUDA_SUCCESS", "no error"},
		{1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
		{2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
		{3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
		{4, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
		{34, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
		{46, "CUDA_ERROR_DEVICE_UNAVAILABLE", "CUDA-capable device(s) is/are busy or unavailable"},
		{100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
		{101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
		{200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
		{201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
		{209, "CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device"},
		{214, "CUDA_ERROR_ECC_UNCORRECTABLE", "uncorrectable ECC error encountered"},
		{218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
		{221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND", "PTX JIT compiler library not found"},
		{222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "the provided PTX was compiled with an unsupported toolchain."},
		{301, "CUDA_ERROR_FILE_NOT_FOUND", "file not found"},
		{304, "CUDA_ERROR_OPERATING_SYSTEM", "OS call failed or operation not supported on this OS"},
		{400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
		{401, "CUDA_ERROR_ILLEGAL_STATE", "the operation cannot be performed in the present state"},
		{500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
		{600, "CUDA_ERROR_NOT_READY", "device not ready"},
		{700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
		{701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
		{702, "CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated"},
		{709, "CUDA_ERROR_CONTEXT_IS_DESTROYED", "context is destroyed"},
		{710, "CUDA_ERROR_ASSERT", "device-side assert triggered"},
		{715, "CUDA_ERROR_ILLEGAL_INSTRUCTION", "an illegal instruction was encountered"},
		{716, "CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned address"},
		{719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
		{800, "CUDA_ERROR_NOT_PERMITTED", "operation not permitted"},
		{801, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
		{802, "CUDA_ERROR_SYSTEM_NOT_READY", "system not yet initialized"},
		{803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "system has unsupported display driver / cuda driver combination"},
		{909, "CUDA_ERROR_TIMEOUT", "wait operation timed out"},
		{999, "CUDA_ERROR_UNKNOWN", "unknown error"},
	}
}

// describe returns the table's name and message for r, or a generic name.
func (r Result) describe() (name, msg string) {
	for _, e := range resultTable() {
		if e.code == r {
			return e.name, e.msg
		}
	}
	return "CUDA_ERROR_" + strconv.Itoa(int(r)), ""
}

// String returns the cuda.h name of r, such as CUDA_ERROR_OUT_OF_MEMORY.
func (r Result) String() string {
	name, _ := r.describe()
	return name
}

// Error is a failed driver call.
type Error struct {
	Op   string // driver function, such as "cuMemAlloc_v2"
	Code Result
	Name string // such as "CUDA_ERROR_OUT_OF_MEMORY"
	Msg  string // such as "out of memory"
}

// newError describes code from the built-in table; Driver.error refines it
// with the driver's own strings.
func newError(op string, code Result) *Error {
	name, msg := code.describe()
	return &Error{Op: op, Code: code, Name: name, Msg: msg}
}

// Error reads like "cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
func (e *Error) Error() string {
	var b strings.Builder
	if e.Op != "" {
		b.WriteString(e.Op)
		b.WriteString(": ")
	}
	if e.Name != "" {
		b.WriteString(e.Name)
	} else {
		b.WriteString(e.Code.String())
	}
	if e.Msg != "" {
		b.WriteString(" (")
		b.WriteString(e.Msg)
		b.WriteString(")")
	}
	return b.String()
}

// IsOutOfMemory reports whether err is, or wraps, a CUDA_ERROR_OUT_OF_MEMORY
// result, so callers can shrink a batch and retry.
func IsOutOfMemory(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == ErrorOutOfMemory
}

// SymbolError reports driver functions missing from the opened library,
// typically because the driver is older than the package requires.
type SymbolError struct {
	Lib     string   // library path given to dlopen
	Missing []string // symbol names, in table order
}

func (e *SymbolError) Error() string {
	return "cuda: " + e.Lib + " lacks symbol " + strings.Join(e.Missing, ", ") +
		" (driver too old, or not libcuda?)"
}
