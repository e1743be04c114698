package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/geoknn/geoknn/internal/dl"
)

// Driver is an opened and initialized CUDA driver library. It holds only
// resolved function addresses, so it is immutable and safe for concurrent
// use. The library stays loaded for the life of the process: unloading
// libcuda while its worker threads run is not safe.
type Driver struct {
	lib      string   // path that dlopen accepted
	resolved []string // C names bound, in table order
	elapsed  string   // the cuEventElapsedTime variant bound
	fn       funcs
	fault    atomic.Pointer[fault]
}

// funcs holds the C entry points, zero where an optional one is absent.
type funcs struct {
	init, driverGetVersion                                                     uintptr
	deviceGetCount, deviceGet, deviceGetName, deviceGetAttribute               uintptr
	deviceTotalMem, primaryCtxRetain, primaryCtxRelease                        uintptr
	ctxSetCurrent, ctxPushCurrent, ctxPopCurrent, ctxSynchronize               uintptr
	memGetInfo, memAlloc, memAllocManaged, memFree, memAllocHost               uintptr
	memFreeHost, memHostAlloc, memcpyHtoD, memcpyDtoH, memcpyDtoD              uintptr
	memHostRegister, memHostUnregister                                         uintptr
	memcpyHtoDAsync, memcpyDtoHAsync, memcpyDtoDAsync                          uintptr
	memsetD8, memsetD32, memsetD8Async, memsetD32Async                         uintptr
	memAdvise, memPrefetchAsync                                                uintptr
	moduleLoadDataEx, moduleUnload, moduleGetFunction                          uintptr
	funcSetAttribute, funcGetAttribute, launchKernel                           uintptr
	streamCreate, streamSynchronize, streamDestroy, streamWaitEvent            uintptr
	eventCreate, eventRecord, eventSynchronize, eventElapsedTime, eventDestroy uintptr
	getErrorName, getErrorString                                               uintptr
}

// symbol binds one entry point of funcs to its C names.
type symbol struct {
	names    []string // candidates, newest ABI first
	optional bool     // absent in drivers the package still supports
	addr     *uintptr
	bound    *string // if set, receives the candidate that resolved
}

// symbolTable lists every driver function the package calls. Where cuda.h
// maps a name to a versioned ABI (#define cuMemAlloc cuMemAlloc_v2) the
// versioned name is bound directly; the plain names are older ABIs kept for
// old binaries and must not be used.
func symbolTable(f *funcs, elapsed *string) []symbol {
	req := func(addr *uintptr, names ...string) symbol { return symbol{names: names, addr: addr} }
	opt := func(addr *uintptr, names ...string) symbol { return symbol{names: names, optional: true, addr: addr} }
	return []symbol{
		req(&f.init, "cuInit"),
		req(&f.driverGetVersion, "cuDriverGetVersion"),
		req(&f.getErrorName, "cuGetErrorName"),
		req(&f.getErrorString, "cuGetErrorString"),

		req(&f.deviceGetCount, "cuDeviceGetCount"),
		req(&f.deviceGet, "cuDeviceGet"),
		req(&f.deviceGetName, "cuDeviceGetName"),
		req(&f.deviceGetAttribute, "cuDeviceGetAttribute"),
		req(&f.deviceTotalMem, "cuDeviceTotalMem_v2"),

		req(&f.primaryCtxRetain, "cuDevicePrimaryCtxRetain"), // never versioned
		req(&f.primaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
		req(&f.ctxSetCurrent, "cuCtxSetCurrent"),
		req(&f.ctxPushCurrent, "cuCtxPushCurrent_v2"),
		req(&f.ctxPopCurrent, "cuCtxPopCurrent_v2"),
		req(&f.ctxSynchronize, "cuCtxSynchronize"),

		req(&f.memGetInfo, "cuMemGetInfo_v2"),
		req(&f.memAlloc, "cuMemAlloc_v2"),
		req(&f.memAllocManaged, "cuMemAllocManaged"),
		req(&f.memFree, "cuMemFree_v2"),
		req(&f.memAllocHost, "cuMemAllocHost_v2"),
		req(&f.memHostAlloc, "cuMemHostAlloc"),
		req(&f.memHostRegister, "cuMemHostRegister_v2"),
		req(&f.memHostUnregister, "cuMemHostUnregister"),
		req(&f.memFreeHost, "cuMemFreeHost"),
		req(&f.memcpyHtoD, "cuMemcpyHtoD_v2"),
		req(&f.memcpyDtoH, "cuMemcpyDtoH_v2"),
		req(&f.memcpyDtoD, "cuMemcpyDtoD_v2"),
		req(&f.memcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"),
		req(&f.memcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
		req(&f.memcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"),
		req(&f.memsetD8, "cuMemsetD8_v2"),
		req(&f.memsetD32, "cuMemsetD32_v2"),
		req(&f.memsetD8Async, "cuMemsetD8Async"), // never versioned
		req(&f.memsetD32Async, "cuMemsetD32Async"),
		// CUmemLocation variants, CUDA 12.2+; cuda.h 13 maps the plain names here.
		opt(&f.memAdvise, "cuMemAdvise_v2"),
		opt(&f.memPrefetchAsync, "cuMemPrefetchAsync_v2"),

		req(&f.moduleLoadDataEx, "cuModuleLoadDataEx"),
		req(&f.moduleUnload, "cuModuleUnload"),
		req(&f.moduleGetFunction, "cuModuleGetFunction"),
		req(&f.funcSetAttribute, "cuFuncSetAttribute"),
		req(&f.funcGetAttribute, "cuFuncGetAttribute"),
		req(&f.launchKernel, "cuLaunchKernel"),

		req(&f.streamCreate, "cuStreamCreate"),
		req(&f.streamSynchronize, "cuStreamSynchronize"),
		req(&f.streamDestroy, "cuStreamDestroy_v2"),
		req(&f.streamWaitEvent, "cuStreamWaitEvent"),
		req(&f.eventCreate, "cuEventCreate"),
		req(&f.eventRecord, "cuEventRecord"),
		req(&f.eventSynchronize, "cuEventSynchronize"),
		// CUDA 12.8 added the _v2 ABI and cuda.h 13 maps cuEventElapsedTime
		// to it; drivers before 12.8 export only the original.
		{names: []string{"cuEventElapsedTime_v2", "cuEventElapsedTime"}, addr: &f.eventElapsedTime, bound: elapsed},
		req(&f.eventDestroy, "cuEventDestroy_v2"),
	}
}

// Load opens the CUDA driver library, binds every function the package uses
// and initializes the driver with cuInit(0).
//
// Without a usable driver the error wraps ErrNoDriver, and for a failed
// cuInit also the *Error giving its reason. A driver lacking a required
// function yields a *SymbolError naming it.
func Load() (*Driver, error) {
	return open(libcudaNames)
}

// open is Load over an explicit list of library paths, for tests.
// libcudaNames are tried in order: the versioned soname the driver
// installs, then the development symlink some containers provide instead.
var libcudaNames = []string{"libcuda.so.1", "libcuda.so"}

func open(paths []string) (*Driver, error) {
	var (
		h     uintptr
		lib   string
		fails []string
	)
	for _, p := range paths {
		hh, err := dl.Open(p)
		if err == nil {
			h, lib = hh, p
			break
		}
		fails = append(fails, oneLine(err.Error()))
	}
	if h == 0 {
		return nil, fmt.Errorf("cuda: %w: %s", ErrNoDriver, strings.Join(fails, "; "))
	}

	d := &Driver{lib: lib}
	var missing []string
	for _, s := range symbolTable(&d.fn, &d.elapsed) {
		for _, name := range s.names {
			if p := dl.Sym(h, name); p != 0 {
				*s.addr = p
				d.resolved = append(d.resolved, name)
				if s.bound != nil {
					*s.bound = name
				}
				break
			}
		}
		if *s.addr == 0 && !s.optional {
			missing = append(missing, strings.Join(s.names, " or "))
		}
	}
	if len(missing) > 0 {
		dl.Close(h)
		return nil, &SymbolError{Lib: lib, Missing: missing}
	}

	if err := d.call("cuInit", d.fn.init, 0); err != nil {
		return nil, fmt.Errorf("cuda: %w: %w", ErrNoDriver, err)
	}
	return d, nil
}

// Symbols returns the C names bound by Load, so callers can log which ABI
// versions the installed driver provided.
func (d *Driver) Symbols() []string {
	if d == nil {
		return nil
	}
	return append([]string(nil), d.resolved...)
}

// sym returns the entry points, all zero for a nil Driver so that call can
// report ErrNoDriver instead of panicking.
func (d *Driver) sym() *funcs {
	if d == nil {
		return new(funcs)
	}
	return &d.fn
}

// call invokes fn and turns its CUresult into an error named after op.
//
// The go:uintptrescapes directive, as on syscall.Syscall, makes the compiler
// treat every pointer converted to uintptr in a caller's argument list as
// escaping: the object lives on the (non-moving) heap and stays alive until
// call returns. That is exactly the lifetime the cgo rules grant Go memory
// passed to C for the duration of a call.
//
//go:uintptrescapes
func (d *Driver) call(op string, fn uintptr, args ...uintptr) error {
	if d == nil {
		return fmt.Errorf("cuda: %s: %w", op, ErrNoDriver)
	}
	if fn == 0 {
		return fmt.Errorf("cuda: %s: not provided by %s: %w", op, d.lib, errors.ErrUnsupported)
	}
	if f := d.fault.Load(); f != nil && f.hit(op) {
		return d.error(op, f.code)
	}
	code := Result(int32(uint32(dl.Call(fn, args...)))) // CUresult is a C int: ignore the register's upper half
	if code == Success {
		return nil
	}
	return d.error(op, code)
}

// error describes code with the driver's own strings where it has them.
func (d *Driver) error(op string, code Result) *Error {
	e := newError(op, code)
	if s := d.errorText(d.fn.getErrorName, code); s != "" {
		e.Name = s
	}
	if s := d.errorText(d.fn.getErrorString, code); s != "" {
		e.Msg = s
	}
	return e
}

// errorText calls cuGetErrorName or cuGetErrorString, which return a
// pointer to a static C string; it returns "" for codes the driver does not
// know.
func (d *Driver) errorText(fn uintptr, code Result) string {
	if fn == 0 {
		return ""
	}
	var p *byte
	if r := dl.Call(fn, uintptr(uint32(code)), uintptr(unsafe.Pointer(&p))); int32(uint32(r)) != 0 {
		return ""
	}
	return goString(p)
}

// WithContext runs fn with ctx current on a locked OS thread. CUDA binds
// contexts to OS threads, and goroutines otherwise migrate between threads
// at any time. ctx stays current on that thread after fn returns.
func (d *Driver) WithContext(ctx Context, fn func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := d.SetCurrent(ctx); err != nil {
		return err
	}
	return fn()
}

// goString copies the NUL-terminated C string at p.
func goString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// cString returns s as a NUL-terminated byte slice for C.
func cString(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}

// oneLine folds a possibly multi-line message (dlerror) onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
