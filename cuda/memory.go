package cuda

import (
	"fmt"
	"runtime"
	"unsafe"
)

// MemGetInfo returns the free and total memory, in bytes, of the device of
// the current context.
func (d *Driver) MemGetInfo() (free, total uint64, err error) {
	var f, t uintptr // size_t
	if err := d.call("cuMemGetInfo_v2", d.sym().memGetInfo, uintptr(unsafe.Pointer(&f)), uintptr(unsafe.Pointer(&t))); err != nil {
		return 0, 0, err
	}
	return uint64(f), uint64(t), nil
}

// MemAlloc allocates bytes of device memory in the current context. The
// memory is not cleared. Test failures with IsOutOfMemory.
func (d *Driver) MemAlloc(bytes uint64) (DevicePtr, error) {
	var p DevicePtr
	if err := d.call("cuMemAlloc_v2", d.sym().memAlloc, uintptr(unsafe.Pointer(&p)), uintptr(bytes)); err != nil {
		return 0, fmt.Errorf("cuda: alloc %d bytes: %w", bytes, err)
	}
	return p, nil
}

// MemAllocManaged allocates bytes of unified memory, addressable from the
// host and every device at the same address. With attachGlobal the memory
// is accessible from any stream (CU_MEM_ATTACH_GLOBAL); otherwise it starts
// attached to the host (CU_MEM_ATTACH_HOST). Free it with MemFree.
func (d *Driver) MemAllocManaged(bytes uint64, attachGlobal bool) (DevicePtr, error) {
	flags := uintptr(memAttachHost)
	if attachGlobal {
		flags = memAttachGlobal
	}
	var p DevicePtr
	if err := d.call("cuMemAllocManaged", d.sym().memAllocManaged, uintptr(unsafe.Pointer(&p)), uintptr(bytes), flags); err != nil {
		return 0, fmt.Errorf("cuda: alloc %d managed bytes: %w", bytes, err)
	}
	return p, nil
}

// MemFree frees memory from MemAlloc or MemAllocManaged.
func (d *Driver) MemFree(p DevicePtr) error {
	return d.call("cuMemFree_v2", d.sym().memFree, uintptr(p))
}

// MemAllocHost allocates bytes of page-locked host memory, which the
// device reaches by DMA: asynchronous copies from or to it overlap with
// host work. The memory is C memory, invisible to the Go garbage
// collector; view it with unsafe.Slice((*T)(p), bytes/size) and release it
// with MemFreeHost. Page-locked memory is scarce; allocate it sparingly.
func (d *Driver) MemAllocHost(bytes uint64) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	if err := d.call("cuMemAllocHost_v2", d.sym().memAllocHost, uintptr(unsafe.Pointer(&p)), uintptr(bytes)); err != nil {
		return nil, fmt.Errorf("cuda: alloc %d host bytes: %w", bytes, err)
	}
	return p, nil
}

// MemHostAllocPortable allocates bytes of page-locked host memory that
// every context treats as pinned (CU_MEMHOSTALLOC_PORTABLE), so that each
// GPU of a multi-GPU engine copies by DMA straight into its part of one
// buffer. Release it with MemFreeHost.
func (d *Driver) MemHostAllocPortable(bytes uint64) (unsafe.Pointer, error) {
	const portable = 0x01
	var p unsafe.Pointer
	if err := d.call("cuMemHostAlloc", d.sym().memHostAlloc, uintptr(unsafe.Pointer(&p)), uintptr(bytes), portable); err != nil {
		return nil, fmt.Errorf("cuda: alloc %d portable host bytes: %w", bytes, err)
	}
	return p, nil
}

// MemHostRegister page-locks bytes of existing host memory at p for every
// context (CU_MEMHOSTREGISTER_PORTABLE), so that copies reach it by DMA.
// Go memory qualifies (the collector does not move it) as long as the
// caller keeps it alive until MemHostUnregister.
func (d *Driver) MemHostRegister(p unsafe.Pointer, bytes uint64) error {
	const portable = 0x01
	if err := d.call("cuMemHostRegister_v2", d.sym().memHostRegister, uintptr(p), uintptr(bytes), portable); err != nil {
		return fmt.Errorf("cuda: register %d host bytes: %w", bytes, err)
	}
	return nil
}

// MemHostUnregister undoes MemHostRegister of the range starting at p.
func (d *Driver) MemHostUnregister(p unsafe.Pointer) error {
	return d.call("cuMemHostUnregister", d.sym().memHostUnregister, uintptr(p))
}

// MemFreeHost frees memory from MemAllocHost or MemHostAllocPortable.
func (d *Driver) MemFreeHost(p unsafe.Pointer) error {
	return d.call("cuMemFreeHost", d.sym().memFreeHost, uintptr(p))
}

// pinHost pins the Go object holding p, if any, for the duration of a C
// call. Pin does nothing for C memory such as MemAllocHost's.
func pinHost(pn *runtime.Pinner, p unsafe.Pointer) {
	if p != nil {
		pn.Pin(p)
	}
}

// MemcpyHtoD copies bytes from host memory at src to device memory at dst.
// src may be Go memory (unsafe.Pointer(&s[0])); it is pinned for the call.
func (d *Driver) MemcpyHtoD(dst DevicePtr, src unsafe.Pointer, bytes uint64) error {
	var pn runtime.Pinner
	defer pn.Unpin()
	pinHost(&pn, src)
	return d.call("cuMemcpyHtoD_v2", d.sym().memcpyHtoD, uintptr(dst), uintptr(src), uintptr(bytes))
}

// MemcpyDtoH copies bytes from device memory at src to host memory at dst.
// dst may be Go memory; it is pinned for the call.
func (d *Driver) MemcpyDtoH(dst unsafe.Pointer, src DevicePtr, bytes uint64) error {
	var pn runtime.Pinner
	defer pn.Unpin()
	pinHost(&pn, dst)
	return d.call("cuMemcpyDtoH_v2", d.sym().memcpyDtoH, uintptr(dst), uintptr(src), uintptr(bytes))
}

// MemcpyDtoD copies bytes between device allocations.
func (d *Driver) MemcpyDtoD(dst, src DevicePtr, bytes uint64) error {
	return d.call("cuMemcpyDtoD_v2", d.sym().memcpyDtoD, uintptr(dst), uintptr(src), uintptr(bytes))
}

// MemcpyHtoDAsync enqueues a host-to-device copy on stream.
//
// Only page-locked memory (MemAllocHost) gives a truly asynchronous copy,
// and it must stay allocated until the stream has passed the copy. From
// Go memory the driver first stages the data and returns once it has read
// src, so Go memory is safe but the call does not overlap with host work.
func (d *Driver) MemcpyHtoDAsync(dst DevicePtr, src unsafe.Pointer, bytes uint64, stream Stream) error {
	var pn runtime.Pinner
	defer pn.Unpin()
	pinHost(&pn, src)
	return d.call("cuMemcpyHtoDAsync_v2", d.sym().memcpyHtoDAsync, uintptr(dst), uintptr(src), uintptr(bytes), uintptr(stream))
}

// MemcpyDtoHAsync enqueues a device-to-host copy on stream.
//
// dst should be page-locked memory from MemAllocHost, left untouched until
// the stream has passed the copy (StreamSynchronize or an event). For
// pageable (Go) memory the driver completes the copy before returning, so
// Go memory is safe too, only without overlap.
func (d *Driver) MemcpyDtoHAsync(dst unsafe.Pointer, src DevicePtr, bytes uint64, stream Stream) error {
	var pn runtime.Pinner
	defer pn.Unpin()
	pinHost(&pn, dst)
	return d.call("cuMemcpyDtoHAsync_v2", d.sym().memcpyDtoHAsync, uintptr(dst), uintptr(src), uintptr(bytes), uintptr(stream))
}

// MemcpyDtoDAsync enqueues a device-to-device copy on stream.
func (d *Driver) MemcpyDtoDAsync(dst, src DevicePtr, bytes uint64, stream Stream) error {
	return d.call("cuMemcpyDtoDAsync_v2", d.sym().memcpyDtoDAsync, uintptr(dst), uintptr(src), uintptr(bytes), uintptr(stream))
}

// MemsetD8 sets n bytes at dst to v.
func (d *Driver) MemsetD8(dst DevicePtr, v uint8, n uint64) error {
	return d.call("cuMemsetD8_v2", d.sym().memsetD8, uintptr(dst), uintptr(v), uintptr(n))
}

// MemsetD32 sets n 32-bit words at dst, which must be 4-byte aligned, to v.
func (d *Driver) MemsetD32(dst DevicePtr, v uint32, n uint64) error {
	return d.call("cuMemsetD32_v2", d.sym().memsetD32, uintptr(dst), uintptr(v), uintptr(n))
}

// MemsetD8Async enqueues MemsetD8 on stream.
func (d *Driver) MemsetD8Async(dst DevicePtr, v uint8, n uint64, stream Stream) error {
	return d.call("cuMemsetD8Async", d.sym().memsetD8Async, uintptr(dst), uintptr(v), uintptr(n), uintptr(stream))
}

// MemsetD32Async enqueues MemsetD32 on stream.
func (d *Driver) MemsetD32Async(dst DevicePtr, v uint32, n uint64, stream Stream) error {
	return d.call("cuMemsetD32Async", d.sym().memsetD32Async, uintptr(dst), uintptr(v), uintptr(n), uintptr(stream))
}

// MemAdvise gives the unified memory system a hint about managed memory
// [p, p+bytes): read mostly, preferred location or accessed by dev.
// CPUDevice names host memory; AdviseSetReadMostly ignores dev. It needs a
// CUDA 12.2+ driver (cuMemAdvise_v2), else the error wraps
// errors.ErrUnsupported.
func (d *Driver) MemAdvise(p DevicePtr, bytes uint64, advice Advice, dev Device) error {
	return d.MemAdviseAt(p, bytes, advice, dev.MemLocation())
}

// MemAdviseAt is MemAdvise with an explicit location, such as a host NUMA
// node.
func (d *Driver) MemAdviseAt(p DevicePtr, bytes uint64, advice Advice, loc MemLocation) error {
	// loc is passed by value as one register: see MemLocation.packed.
	if err := d.call("cuMemAdvise_v2", d.sym().memAdvise, uintptr(p), uintptr(bytes), uintptr(advice), loc.packed()); err != nil {
		return fmt.Errorf("cuda: %v for %v: %w", advice, loc, err)
	}
	return nil
}

// MemPrefetch enqueues on stream a migration of managed memory
// [p, p+bytes) to dev, or to the host for CPUDevice. Prefetching to a
// device needs ConcurrentManagedAccess. It needs a CUDA 12.2+ driver
// (cuMemPrefetchAsync_v2), else the error wraps errors.ErrUnsupported.
func (d *Driver) MemPrefetch(p DevicePtr, bytes uint64, dev Device, stream Stream) error {
	return d.MemPrefetchTo(p, bytes, dev.MemLocation(), stream)
}

// MemPrefetchTo is MemPrefetch with an explicit location.
func (d *Driver) MemPrefetchTo(p DevicePtr, bytes uint64, loc MemLocation, stream Stream) error {
	const flags = 0 // reserved, must be zero
	if err := d.call("cuMemPrefetchAsync_v2", d.sym().memPrefetchAsync, uintptr(p), uintptr(bytes), loc.packed(), flags, uintptr(stream)); err != nil {
		return fmt.Errorf("cuda: prefetch to %v: %w", loc, err)
	}
	return nil
}
