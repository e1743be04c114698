package cuda

import (
	"fmt"
	"math"
	"runtime"
	"unsafe"
)

// Args is the argument block of a kernel launch: one 8-byte slot per kernel
// parameter and the array of pointers to those slots that cuLaunchKernel
// takes as kernelParams. The driver learns each parameter's size from the
// kernel image and copies that many bytes from the start of its slot, so a
// 4-byte value in the low half of a little-endian slot reads correctly.
//
// Build an Args once per kernel wrapper and refill it before each launch;
// setters then allocate nothing. An Args must not be used by several
// goroutines at once. Setters do not panic: an index out of range is
// recorded and reported by Launch.
type Args struct {
	slots  []uint64         // parameter values
	ptrs   []unsafe.Pointer // ptrs[i] == &slots[i]: the kernelParams array
	set    []bool           // slots written since NewArgs
	params []Param          // the kernel's parameter types (NewArgsOf), or nil
	err    error            // first misuse, reported by Launch
}

// Param is the type of one kernel parameter as PTX declares it: a kernel's
// parameter list in these terms is what an Args made by NewArgsOf checks
// every setter against.
type Param uint8

// Parameter types.
const (
	U32 Param = iota + 1 // .u32 / .s32 / .b32: int, unsigned int
	U64                  // .u64 / .s64 / .b64: pointers, 64-bit integers
	F32                  // .f32: float
	F64                  // .f64: double
)

func (p Param) String() string {
	switch p {
	case U32:
		return "u32"
	case U64:
		return "u64"
	case F32:
		return "f32"
	case F64:
		return "f64"
	}
	return fmt.Sprintf("Param(%d)", uint8(p))
}

// NewArgsOf returns an argument block for a kernel with the given parameter
// types: a setter of another type or width for a parameter is recorded as
// misuse and reported by Launch, so a wrapper that drifts from its kernel
// fails at its first launch instead of passing garbage.
func NewArgsOf(params ...Param) *Args {
	a := NewArgs(len(params))
	a.params = params
	return a
}

// NewArgs returns an argument block for a kernel with n parameters.
func NewArgs(n int) *Args {
	if n < 0 {
		return &Args{err: fmt.Errorf("cuda: NewArgs(%d): negative count", n)}
	}
	a := &Args{
		slots: make([]uint64, n),
		ptrs:  make([]unsafe.Pointer, n),
		set:   make([]bool, n),
	}
	for i := range a.slots {
		a.ptrs[i] = unsafe.Pointer(&a.slots[i])
	}
	return a
}

// Len returns the number of parameter slots.
func (a *Args) Len() int { return len(a.slots) }

func (a *Args) put(i int, v uint64, what string, typ Param) {
	if i < 0 || i >= len(a.slots) {
		if a.err == nil {
			a.err = fmt.Errorf("cuda: Args.%s(%d): index out of range [0,%d)", what, i, len(a.slots))
		}
		return
	}
	if a.params != nil && a.params[i] != typ && a.err == nil {
		a.err = fmt.Errorf("cuda: Args.%s(%d): the kernel's parameter %d is %v, not %v", what, i, i, a.params[i], typ)
	}
	a.slots[i] = v
	a.set[i] = true
}

// SetPtr sets parameter i to a device pointer (a T* parameter).
func (a *Args) SetPtr(i int, p DevicePtr) { a.put(i, uint64(p), "SetPtr", U64) }

// SetUint32 sets parameter i to an unsigned 32-bit value.
func (a *Args) SetUint32(i int, v uint32) { a.put(i, uint64(v), "SetUint32", U32) }

// SetInt32 sets parameter i to a signed 32-bit value.
func (a *Args) SetInt32(i int, v int32) { a.put(i, uint64(uint32(v)), "SetInt32", U32) }

// SetUint64 sets parameter i to an unsigned 64-bit value.
func (a *Args) SetUint64(i int, v uint64) { a.put(i, v, "SetUint64", U64) }

// SetFloat32 sets parameter i to a float.
func (a *Args) SetFloat32(i int, v float32) { a.put(i, uint64(math.Float32bits(v)), "SetFloat32", F32) }

// SetFloat64 sets parameter i to a double.
func (a *Args) SetFloat64(i int, v float64) { a.put(i, math.Float64bits(v), "SetFloat64", F64) }

// check reports misuse: a bad setter index or a parameter never set.
func (a *Args) check() error {
	if a.err != nil {
		return a.err
	}
	for i, ok := range a.set {
		if !ok {
			return fmt.Errorf("cuda: kernel argument %d of %d never set", i, len(a.set))
		}
	}
	return nil
}

// Launch enqueues kernel f on stream with the given grid and block shapes,
// sharedBytes of dynamic shared memory per block, and arguments args (nil
// for a kernel without parameters). Launch returns once the launch is
// queued; execution errors surface from a later synchronizing call.
func (d *Driver) Launch(f Function, grid, block Dim3, sharedBytes uint32, stream Stream, args *Args) error {
	var params uintptr // NULL for a kernel without parameters
	var pn runtime.Pinner
	defer pn.Unpin()
	if args != nil {
		if err := args.check(); err != nil {
			return err
		}
		if len(args.ptrs) > 0 {
			// kernelParams is Go memory holding Go pointers (to the slots), so
			// both blocks are pinned: cgo forbids passing unpinned Go pointers
			// inside memory given to C. Unpinning when Launch returns is safe:
			// per the cuLaunchKernel documentation each kernelParams[i] "must
			// point to a region of memory from which the actual kernel
			// parameter will be copied", and the driver takes that copy during
			// the call, so later launches may reuse the slots immediately.
			pn.Pin(&args.slots[0])
			pn.Pin(&args.ptrs[0])
			params = uintptr(unsafe.Pointer(&args.ptrs[0]))
		}
	}
	g, b := grid.norm(), block.norm()
	if err := d.call("cuLaunchKernel", d.sym().launchKernel, uintptr(f),
		uintptr(g.X), uintptr(g.Y), uintptr(g.Z),
		uintptr(b.X), uintptr(b.Y), uintptr(b.Z),
		uintptr(sharedBytes), uintptr(stream), params, 0); err != nil {
		return fmt.Errorf("cuda: launch grid %v block %v shared %d: %w", g, b, sharedBytes, err)
	}
	return nil
}
