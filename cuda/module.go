package cuda

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"unsafe"
)

// jitLogSize bounds the JIT error log kept from a failed ModuleLoadData.
const jitLogSize = 16 << 10

// ModuleLoadData JIT-compiles PTX text for the device of the current
// context and loads it. When compilation fails the error carries the JIT
// compiler's log (ptxas messages with line numbers).
func (d *Driver) ModuleLoadData(ptx string) (Module, error) {
	return d.loadModule(cString(ptx), "PTX")
}

// ModuleLoadFatbin loads a fat binary (nvcc -fatbin): the driver takes the
// machine code built for the current device's architecture when the image
// holds it, and JIT-compiles the image's PTX otherwise.
func (d *Driver) ModuleLoadFatbin(image []byte) (Module, error) {
	if len(image) == 0 {
		return 0, fmt.Errorf("cuda: load fatbin: empty image")
	}
	return d.loadModule(image, "fatbin")
}

func (d *Driver) loadModule(img []byte, what string) (Module, error) {
	log := make([]byte, jitLogSize)
	opts := []int32{jitErrorLogBuffer, jitErrorLogBufferSizeBytes} // CUjit_option is a C enum: 4 bytes
	// optionValues is a void*[]: the log buffer's address, then its size cast
	// to a pointer. The driver writes the log's length back into vals[1].
	vals := []uintptr{uintptr(unsafe.Pointer(&log[0])), uintptr(len(log))}

	// vals holds the log's address as an integer, invisible to the GC, so
	// log is pinned like every other block the driver reads or writes.
	var pn runtime.Pinner
	defer pn.Unpin()
	pn.Pin(&img[0])
	pn.Pin(&log[0])
	pn.Pin(&opts[0])
	pn.Pin(&vals[0])

	var m Module
	err := d.call("cuModuleLoadDataEx", d.sym().moduleLoadDataEx,
		uintptr(unsafe.Pointer(&m)), uintptr(unsafe.Pointer(&img[0])),
		uintptr(len(opts)), uintptr(unsafe.Pointer(&opts[0])), uintptr(unsafe.Pointer(&vals[0])))
	if err == nil {
		return m, nil
	}
	n := min(vals[1], uintptr(len(log)))
	if i := bytes.IndexByte(log[:n], 0); i >= 0 {
		n = uintptr(i)
	}
	if text := strings.TrimSpace(string(log[:n])); text != "" {
		return 0, fmt.Errorf("cuda: load %s: %w; JIT log:\n%s", what, err, text)
	}
	return 0, fmt.Errorf("cuda: load %s: %w", what, err)
}

// ModuleUnload unloads m; its functions become invalid.
func (d *Driver) ModuleUnload(m Module) error {
	return d.call("cuModuleUnload", d.sym().moduleUnload, uintptr(m))
}

// ModuleGetFunction returns the kernel called name (its .entry name) in m.
func (d *Driver) ModuleGetFunction(m Module, name string) (Function, error) {
	cname := cString(name)
	var pn runtime.Pinner
	defer pn.Unpin()
	pn.Pin(&cname[0])

	var f Function
	if err := d.call("cuModuleGetFunction", d.sym().moduleGetFunction,
		uintptr(unsafe.Pointer(&f)), uintptr(m), uintptr(unsafe.Pointer(&cname[0]))); err != nil {
		return 0, fmt.Errorf("cuda: kernel %q: %w", name, err)
	}
	return f, nil
}

// FuncSetAttribute sets a settable attribute of f, such as
// FuncMaxDynamicSharedSizeBytes, which must be raised before launching with
// more than 48 KiB of dynamic shared memory.
func (d *Driver) FuncSetAttribute(f Function, attr FuncAttribute, value int) error {
	if err := d.call("cuFuncSetAttribute", d.sym().funcSetAttribute, uintptr(f), uintptr(attr), uintptr(value)); err != nil {
		return fmt.Errorf("cuda: set function attribute %d=%d: %w", attr, value, err)
	}
	return nil
}

// FuncGetAttribute returns an attribute of f, such as FuncNumRegs.
func (d *Driver) FuncGetAttribute(f Function, attr FuncAttribute) (int, error) {
	var v int32
	if err := d.call("cuFuncGetAttribute", d.sym().funcGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(attr), uintptr(f)); err != nil {
		return 0, fmt.Errorf("cuda: function attribute %d: %w", attr, err)
	}
	return int(v), nil
}
