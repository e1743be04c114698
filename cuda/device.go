package cuda

import (
	"bytes"
	"fmt"
	"unsafe"
)

// Version returns the CUDA version the driver supports, encoded as
// 1000*major + 10*minor (13000 for CUDA 13.0).
func (d *Driver) Version() (int, error) {
	var v int32
	if err := d.call("cuDriverGetVersion", d.sym().driverGetVersion, uintptr(unsafe.Pointer(&v))); err != nil {
		return 0, err
	}
	return int(v), nil
}

// DeviceCount returns the number of CUDA devices visible to the process.
func (d *Driver) DeviceCount() (int, error) {
	var n int32
	if err := d.call("cuDeviceGetCount", d.sym().deviceGetCount, uintptr(unsafe.Pointer(&n))); err != nil {
		return 0, err
	}
	return int(n), nil
}

// Device returns the handle of the device with the given ordinal.
func (d *Driver) Device(ordinal int) (Device, error) {
	var dev Device
	if err := d.call("cuDeviceGet", d.sym().deviceGet, uintptr(unsafe.Pointer(&dev)), uintptr(ordinal)); err != nil {
		return 0, fmt.Errorf("cuda: device %d: %w", ordinal, err)
	}
	return dev, nil
}

// DeviceName returns the product name of dev, such as "NVIDIA H100 80GB HBM3".
func (d *Driver) DeviceName(dev Device) (string, error) {
	var buf [256]byte
	if err := d.call("cuDeviceGetName", d.sym().deviceGetName,
		uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(dev)); err != nil {
		return "", fmt.Errorf("cuda: device %d: %w", dev, err)
	}
	if i := bytes.IndexByte(buf[:], 0); i >= 0 {
		return string(buf[:i]), nil
	}
	return string(buf[:]), nil
}

// DeviceAttribute returns the value of attr for dev.
func (d *Driver) DeviceAttribute(dev Device, attr DeviceAttribute) (int, error) {
	var v int32
	if err := d.call("cuDeviceGetAttribute", d.sym().deviceGetAttribute,
		uintptr(unsafe.Pointer(&v)), uintptr(attr), uintptr(dev)); err != nil {
		return 0, fmt.Errorf("cuda: device %d attribute %v: %w", dev, attr, err)
	}
	return int(v), nil
}

// DeviceTotalMem returns the total global memory of dev in bytes.
func (d *Driver) DeviceTotalMem(dev Device) (uint64, error) {
	var n uintptr // size_t
	if err := d.call("cuDeviceTotalMem_v2", d.sym().deviceTotalMem, uintptr(unsafe.Pointer(&n)), uintptr(dev)); err != nil {
		return 0, fmt.Errorf("cuda: device %d: %w", dev, err)
	}
	return uint64(n), nil
}

// PrimaryCtxRetain retains the primary context of dev, creating it if
// needed. Each successful call must be balanced by PrimaryCtxRelease. The
// primary context is the one the CUDA runtime and other libraries share.
func (d *Driver) PrimaryCtxRetain(dev Device) (Context, error) {
	var ctx Context
	if err := d.call("cuDevicePrimaryCtxRetain", d.sym().primaryCtxRetain, uintptr(unsafe.Pointer(&ctx)), uintptr(dev)); err != nil {
		return 0, fmt.Errorf("cuda: device %d: %w", dev, err)
	}
	return ctx, nil
}

// PrimaryCtxRelease releases a reference taken by PrimaryCtxRetain.
func (d *Driver) PrimaryCtxRelease(dev Device) error {
	if err := d.call("cuDevicePrimaryCtxRelease_v2", d.sym().primaryCtxRelease, uintptr(dev)); err != nil {
		return fmt.Errorf("cuda: device %d: %w", dev, err)
	}
	return nil
}

// SetCurrent makes ctx the current context of the calling OS thread; zero
// unbinds it. Lock the goroutine to its thread first (runtime.LockOSThread)
// or use WithContext.
func (d *Driver) SetCurrent(ctx Context) error {
	return d.call("cuCtxSetCurrent", d.sym().ctxSetCurrent, uintptr(ctx))
}

// PushCurrent pushes ctx on the calling OS thread's context stack.
func (d *Driver) PushCurrent(ctx Context) error {
	return d.call("cuCtxPushCurrent_v2", d.sym().ctxPushCurrent, uintptr(ctx))
}

// PopCurrent pops the calling OS thread's current context and returns it.
func (d *Driver) PopCurrent() (Context, error) {
	var ctx Context
	if err := d.call("cuCtxPopCurrent_v2", d.sym().ctxPopCurrent, uintptr(unsafe.Pointer(&ctx))); err != nil {
		return 0, err
	}
	return ctx, nil
}

// Synchronize blocks until all work in the current context has completed,
// and reports errors of earlier asynchronous work (a faulting kernel).
func (d *Driver) Synchronize() error {
	return d.call("cuCtxSynchronize", d.sym().ctxSynchronize)
}
