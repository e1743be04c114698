package cuda

import (
	"errors"
	"fmt"
	"reflect"
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
// Each field's tag is the one place that names its driver function: the
// C names to try, newest ABI first, and ",optional" for one absent in
// drivers the package still supports (symbolTable reads them). Where
// cuda.h maps a name to a versioned ABI (#define cuMemAlloc cuMemAlloc_v2)
// the versioned name is bound directly; the plain names are older ABIs
// kept for old binaries and must not be used.
type funcs struct {
	init             uintptr `cu:"cuInit"`
	driverGetVersion uintptr `cu:"cuDriverGetVersion"`
	getErrorName     uintptr `cu:"cuGetErrorName"`
	getErrorString   uintptr `cu:"cuGetErrorString"`

	deviceGetCount     uintptr `cu:"cuDeviceGetCount"`
	deviceGet          uintptr `cu:"cuDeviceGet"`
	deviceGetName      uintptr `cu:"cuDeviceGetName"`
	deviceGetAttribute uintptr `cu:"cuDeviceGetAttribute"`
	deviceTotalMem     uintptr `cu:"cuDeviceTotalMem_v2"`

	primaryCtxRetain  uintptr `cu:"cuDevicePrimaryCtxRetain"` // never versioned
	primaryCtxRelease uintptr `cu:"cuDevicePrimaryCtxRelease_v2"`
	ctxSetCurrent     uintptr `cu:"cuCtxSetCurrent"`
	ctxPushCurrent    uintptr `cu:"cuCtxPushCurrent_v2"`
	ctxPopCurrent     uintptr `cu:"cuCtxPopCurrent_v2"`
	ctxSynchronize    uintptr `cu:"cuCtxSynchronize"`

	memGetInfo        uintptr `cu:"cuMemGetInfo_v2"`
	memAlloc          uintptr `cu:"cuMemAlloc_v2"`
	memAllocManaged   uintptr `cu:"cuMemAllocManaged"`
	memFree           uintptr `cu:"cuMemFree_v2"`
	memAllocHost      uintptr `cu:"cuMemAllocHost_v2"`
	memHostAlloc      uintptr `cu:"cuMemHostAlloc"`
	memHostRegister   uintptr `cu:"cuMemHostRegister_v2"`
	memHostUnregister uintptr `cu:"cuMemHostUnregister"`
	memFreeHost       uintptr `cu:"cuMemFreeHost"`
	memcpyHtoD        uintptr `cu:"cuMemcpyHtoD_v2"`
	memcpyDtoH        uintptr `cu:"cuMemcpyDtoH_v2"`
	memcpyDtoD        uintptr `cu:"cuMemcpyDtoD_v2"`
	memcpyHtoDAsync   uintptr `cu:"cuMemcpyHtoDAsync_v2"`
	memcpyDtoHAsync   uintptr `cu:"cuMemcpyDtoHAsync_v2"`
	memcpyDtoDAsync   uintptr `cu:"cuMemcpyDtoDAsync_v2"`
	memsetD8          uintptr `cu:"cuMemsetD8_v2"`
	memsetD32         uintptr `cu:"cuMemsetD32_v2"`
	memsetD8Async     uintptr `cu:"cuMemsetD8Async"` // never versioned
	memsetD32Async    uintptr `cu:"cuMemsetD32Async"`
	// CUmemLocation variants, CUDA 12.2+; cuda.h 13 maps the plain names here.
	memAdvise        uintptr `cu:"cuMemAdvise_v2,optional"`
	memPrefetchAsync uintptr `cu:"cuMemPrefetchAsync_v2,optional"`

	moduleLoadDataEx  uintptr `cu:"cuModuleLoadDataEx"`
	moduleUnload      uintptr `cu:"cuModuleUnload"`
	moduleGetFunction uintptr `cu:"cuModuleGetFunction"`
	funcSetAttribute  uintptr `cu:"cuFuncSetAttribute"`
	funcGetAttribute  uintptr `cu:"cuFuncGetAttribute"`
	launchKernel      uintptr `cu:"cuLaunchKernel"`

	streamCreate      uintptr `cu:"cuStreamCreate"`
	streamSynchronize uintptr `cu:"cuStreamSynchronize"`
	streamDestroy     uintptr `cu:"cuStreamDestroy_v2"`
	streamWaitEvent   uintptr `cu:"cuStreamWaitEvent"`
	eventCreate       uintptr `cu:"cuEventCreate"`
	eventRecord       uintptr `cu:"cuEventRecord"`
	eventSynchronize  uintptr `cu:"cuEventSynchronize"`
	// CUDA 12.8 added the _v2 ABI and cuda.h 13 maps cuEventElapsedTime
	// to it; drivers before 12.8 export only the original.
	eventElapsedTime uintptr `cu:"cuEventElapsedTime_v2 cuEventElapsedTime"`
	eventDestroy     uintptr `cu:"cuEventDestroy_v2"`
}

// symbol binds one entry point of funcs to its C names.
type symbol struct {
	names    []string // candidates, newest ABI first
	optional bool     // absent in drivers the package still supports
	addr     *uintptr
	bound    *string // if set, receives the candidate that resolved
}

// symbolTable lists every driver function the package calls, in funcs'
// order, from funcs' tags: each binds its field of f. elapsed receives the
// cuEventElapsedTime ABI that resolved, which names the timing call.
func symbolTable(f *funcs, elapsed *string) []symbol {
	t := reflect.TypeFor[funcs]()
	table := make([]symbol, t.NumField())
	for i := range table {
		field := t.Field(i)
		names, optional := strings.CutSuffix(field.Tag.Get("cu"), ",optional")
		s := symbol{names: strings.Fields(names), optional: optional, addr: (*uintptr)(unsafe.Add(unsafe.Pointer(f), field.Offset))}
		if s.addr == &f.eventElapsedTime {
			s.bound = elapsed
		}
		table[i] = s
	}
	return table
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
