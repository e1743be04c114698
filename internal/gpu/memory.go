package gpu

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"unsafe"

	"github.com/geoknn/geoknn/cuda"
)

// MemoryMode selects where the GPU engine keeps each job's observations and
// answers.
type MemoryMode int

const (
	// DeviceMemory: plain device allocations, filled and drained by
	// asynchronous copies through pinned host buffers on a stream a slot,
	// so one job's copies overlap the previous job's kernels.
	DeviceMemory MemoryMode = iota
	// ManagedMemory: the baseline kernel's design: managed allocations the
	// host writes directly, advised to live on their GPU and prefetched there
	// before the kernels, then prefetched back to the host.
	ManagedMemory
)

func (m MemoryMode) String() string {
	if m == ManagedMemory {
		return "managed"
	}
	return "device"
}

// ParseMemoryMode parses "device" or "managed".
func ParseMemoryMode(s string) (MemoryMode, error) {
	switch strings.ToLower(s) {
	case "device":
		return DeviceMemory, nil
	case "managed":
		return ManagedMemory, nil
	}
	return 0, fmt.Errorf("unknown memory mode %q (want device or managed)", s)
}

// pinned keeps Go memory handed to the driver in place for a call.
func pinned[T any](s []T, fn func(unsafe.Pointer) error) error {
	if len(s) == 0 {
		return fn(nil)
	}
	var p runtime.Pinner
	p.Pin(&s[0])
	defer p.Unpin()
	return fn(unsafe.Pointer(&s[0]))
}

// buffer is a device or managed allocation that grows on demand and is
// reused across jobs and calls.
type buffer struct {
	ptr     cuda.DevicePtr
	bytes   int
	managed bool
}

func (b *buffer) ensure(drv *cuda.Driver, bytes int, managed bool, dev cuda.Device) error {
	if b.ptr != 0 && b.bytes >= bytes && b.managed == managed {
		return nil
	}
	if err := b.free(drv); err != nil {
		return err
	}
	bytes = max(bytes, 256)
	var err error
	if managed {
		// Never ask for more managed memory than the GPU has free: over-
		// subscribing managed memory can stall the whole device.
		free, _, ferr := drv.MemGetInfo()
		if ferr != nil {
			return ferr
		}
		if uint64(bytes) > free/10*9 {
			return fmt.Errorf("%d MiB of managed memory asked for, %d MiB free on the GPU: use a smaller --batch-size",
				bytes>>20, free>>20)
		}
		if b.ptr, err = drv.MemAllocManaged(uint64(bytes), true); err != nil {
			return err
		}
		if err = drv.MemAdvise(b.ptr, uint64(bytes), cuda.AdviseSetPreferredLocation, dev); err != nil {
			return err
		}
	} else if b.ptr, err = drv.MemAlloc(uint64(bytes)); err != nil {
		return err
	}
	b.bytes, b.managed = bytes, managed
	return nil
}

func (b *buffer) free(drv *cuda.Driver) error {
	if b.ptr == 0 {
		return nil
	}
	err := drv.MemFree(b.ptr)
	b.ptr, b.bytes = 0, 0
	return err
}

// hostView is the host-side mapping of a managed buffer as a []T.
func hostView[T any](b *buffer, n int) []T {
	return unsafe.Slice((*T)(devicePtrToPointer(b.ptr)), n)
}

// devicePtrToPointer turns a managed (or pinned host) address, which is
// valid host memory not owned by Go, into a pointer.
func devicePtrToPointer(p cuda.DevicePtr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}

// pinnedHost is page-locked host memory for asynchronous copies.
type pinnedHost struct {
	p     unsafe.Pointer
	bytes int
}

func (h *pinnedHost) ensure(drv *cuda.Driver, bytes int) error {
	if h.p != nil && h.bytes >= bytes {
		return nil
	}
	if err := h.free(drv); err != nil {
		return err
	}
	p, err := drv.MemAllocHost(uint64(bytes))
	if err != nil {
		return err
	}
	h.p, h.bytes = p, bytes
	return nil
}

func (h *pinnedHost) free(drv *cuda.Driver) error {
	if h.p == nil {
		return nil
	}
	err := drv.MemFreeHost(h.p)
	h.p, h.bytes = nil, 0
	return err
}

func view[T any](p unsafe.Pointer, offsetElems, n int) []T {
	var zero T
	return unsafe.Slice((*T)(unsafe.Add(p, uintptr(offsetElems)*unsafe.Sizeof(zero))), n)
}

// growKeep enlarges device buffer b to at least bytes, keeping what it
// holds (a synchronous copy: the caller has synchronized the streams that
// write b).
func (b *buffer) growKeep(drv *cuda.Driver, bytes int) error {
	if b.ptr != 0 && b.bytes >= bytes {
		return nil
	}
	var nb buffer
	if err := nb.ensure(drv, bytes, false, 0); err != nil {
		return err
	}
	if b.ptr != 0 {
		if err := drv.MemcpyDtoD(nb.ptr, b.ptr, uint64(b.bytes)); err != nil {
			return errors.Join(err, nb.free(drv))
		}
	}
	if err := b.free(drv); err != nil {
		return errors.Join(err, nb.free(drv))
	}
	*b = nb
	return nil
}
