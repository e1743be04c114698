// Package cuda is a thin binding of the NVIDIA CUDA driver API (libcuda).
//
// The binding is pure Go: the driver library is opened at run time with
// dlopen through github.com/ebitengine/purego, so programs using it build
// with CGO_ENABLED=0 and run on machines without a GPU. There, Load returns
// an error wrapping ErrNoDriver and the caller can fall back to the CPU.
//
// Load opens libcuda.so.1, resolves every symbol the package uses and calls
// cuInit. The returned *Driver is immutable and safe for concurrent use; its
// methods mirror the driver API calls one to one and report failures as
// errors (a *Error for a CUDA result code), never as panics.
//
// # Symbols
//
// The driver exports several ABI versions of some functions. The package
// resolves the explicit versioned names (cuMemAlloc_v2, cuMemcpyHtoD_v2,
// cuMemAdvise_v2, ...) that cuda.h maps the plain names to, so behaviour does
// not depend on which unversioned alias a given driver happens to keep.
// cuEventElapsedTime_v2 (CUDA 12.8+, the name cuda.h 13 uses) is preferred,
// with the original cuEventElapsedTime as the fallback for older drivers.
// cuMemAdvise_v2 and cuMemPrefetchAsync_v2 (CUDA 12.2+) are optional: with an
// older driver MemAdvise and MemPrefetch return an error wrapping
// errors.ErrUnsupported.
//
// # Contexts and OS threads
//
// A CUDA context is current per OS thread, while goroutines migrate between
// threads. Code that makes a context current must stay on one thread for as
// long as it relies on it: call runtime.LockOSThread before SetCurrent, or use
// Driver.WithContext, which does both.
//
// # Memory passed to the driver
//
// Handles and device pointers are plain integers. Go memory handed to the
// driver (out-parameters, PTX text, kernel argument blocks, host buffers of
// synchronous copies) is pinned with runtime.Pinner or kept alive for exactly
// the duration of the C call, following the cgo pointer-passing rules.
// Asynchronous copies should use page-locked memory from MemAllocHost; see
// MemcpyHtoDAsync.
//
// # Kernels
//
// Kernels are loaded from PTX text with ModuleLoadData and launched with
// Launch. Kernel arguments are marshalled through Args, a reusable block of
// 8-byte slots built once per kernel wrapper:
//
//	args := cuda.NewArgs(2)
//	args.SetPtr(0, out)
//	args.SetUint32(1, uint32(n))
//	err := drv.Launch(fn, cuda.Dim3{X: blocks}, cuda.Dim3{X: 256}, 0, stream, args)
package cuda
