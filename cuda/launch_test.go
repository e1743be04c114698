package cuda

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"
	"unsafe"
)

func TestArgsMarshalling(t *testing.T) {
	tests := []struct {
		name string
		set  func(a *Args)
		want [8]byte // little-endian image of the slot
	}{
		{"ptr", func(a *Args) { a.SetPtr(0, 0x7f00_1234_5678_9abc) }, le64(0x7f00_1234_5678_9abc)},
		{"uint32", func(a *Args) { a.SetUint32(0, 0xdeadbeef) }, le64(0xdeadbeef)},
		{"int32 negative", func(a *Args) { a.SetInt32(0, -2) }, le64(0xffff_fffe)},
		{"int32 positive", func(a *Args) { a.SetInt32(0, 7) }, le64(7)},
		{"uint64", func(a *Args) { a.SetUint64(0, 1<<63|5) }, le64(1<<63 | 5)},
		{"float32", func(a *Args) { a.SetFloat32(0, 1.5) }, le64(uint64(math.Float32bits(1.5)))},
		{"float32 negative zero", func(a *Args) { a.SetFloat32(0, float32(math.Copysign(0, -1))) }, le64(0x8000_0000)},
		{"float64", func(a *Args) { a.SetFloat64(0, -2.25) }, le64(math.Float64bits(-2.25))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := NewArgs(1)
			a.SetUint64(0, math.MaxUint64) // a narrower setter must clear the high half
			tt.set(a)
			got := *(*[8]byte)(a.ptrs[0])
			if got != tt.want {
				t.Errorf("slot bytes = % x, want % x", got, tt.want)
			}
			if err := a.check(); err != nil {
				t.Errorf("check: %v", err)
			}
		})
	}
}

// The driver reads a 4-byte parameter from the first 4 bytes its pointer
// addresses; on a little-endian host that must be the value itself.
func TestArgsNarrowRead(t *testing.T) {
	a := NewArgs(2)
	a.SetUint32(0, 0x01020304)
	a.SetFloat32(1, 3.25)
	if got := *(*uint32)(a.ptrs[0]); got != 0x01020304 {
		t.Errorf("uint32 read through kernelParams[0] = %#x", got)
	}
	if got := *(*float32)(a.ptrs[1]); got != 3.25 {
		t.Errorf("float32 read through kernelParams[1] = %v", got)
	}
}

func TestArgsPointerArray(t *testing.T) {
	const n = 5
	a := NewArgs(n)
	if a.Len() != n || len(a.ptrs) != n || len(a.slots) != n {
		t.Fatalf("Len = %d, ptrs %d, slots %d", a.Len(), len(a.ptrs), len(a.slots))
	}
	base := uintptr(unsafe.Pointer(&a.slots[0]))
	for i := range n {
		if got, want := uintptr(a.ptrs[i]), base+uintptr(8*i); got != want {
			t.Errorf("ptrs[%d] = %#x, want &slots[%d] = %#x", i, got, i, want)
		}
	}
	for i := range n {
		a.SetUint64(i, uint64(100+i))
	}
	for i := range n {
		if got := *(*uint64)(a.ptrs[i]); got != uint64(100+i) {
			t.Errorf("*ptrs[%d] = %d", i, got)
		}
	}
	// Slots are contiguous 8-byte cells, one backing array.
	if unsafe.Sizeof(a.slots[0]) != 8 {
		t.Errorf("slot size %d", unsafe.Sizeof(a.slots[0]))
	}
}

func TestArgsMisuse(t *testing.T) {
	tests := []struct {
		name string
		args *Args
		want string
	}{
		{"negative count", NewArgs(-1), "negative"},
		{"index high", func() *Args { a := NewArgs(2); a.SetPtr(0, 1); a.SetPtr(1, 1); a.SetFloat32(2, 1); return a }(),
			"Args.SetFloat32(2): index out of range [0,2)"},
		{"index negative", func() *Args { a := NewArgs(1); a.SetInt32(-1, 1); a.SetInt32(0, 1); return a }(),
			"Args.SetInt32(-1)"},
		{"unset", func() *Args { a := NewArgs(3); a.SetPtr(0, 1); a.SetPtr(2, 1); return a }(),
			"kernel argument 1 of 3 never set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.args.check()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("check() = %v, want error containing %q", err, tt.want)
			}
			// Launch reports misuse before touching the driver.
			if err := (&Driver{}).Launch(0, Dim3{X: 1}, Dim3{X: 1}, 0, 0, tt.args); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Launch = %v, want error containing %q", err, tt.want)
			}
		})
	}
	if err := NewArgs(0).check(); err != nil {
		t.Errorf("empty Args: %v", err)
	}
}

func TestDim3Norm(t *testing.T) {
	tests := []struct{ in, want Dim3 }{
		{Dim3{}, Dim3{0, 1, 1}},
		{Dim3{X: 7}, Dim3{7, 1, 1}},
		{Dim3{3, 4, 0}, Dim3{3, 4, 1}},
		{Dim3{3, 4, 5}, Dim3{3, 4, 5}},
	}
	for _, tt := range tests {
		if got := tt.in.norm(); got != tt.want {
			t.Errorf("%v.norm() = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func le64(v uint64) (b [8]byte) {
	binary.LittleEndian.PutUint64(b[:], v)
	return b
}

func TestArgsOfTypes(t *testing.T) {
	a := NewArgsOf(U64, U32, F32)
	a.SetPtr(0, 1)
	a.SetInt32(1, -1)
	a.SetFloat32(2, 0.5)
	if err := a.check(); err != nil {
		t.Fatalf("matching setters: %v", err)
	}
	for _, tc := range []struct {
		name string
		set  func(a *Args)
	}{
		{"pointer for a u32", func(a *Args) { a.SetPtr(1, 1) }},
		{"int for a pointer", func(a *Args) { a.SetInt32(0, 1) }},
		{"double for a float", func(a *Args) { a.SetFloat64(2, 1) }},
	} {
		b := NewArgsOf(U64, U32, F32)
		b.SetPtr(0, 1)
		b.SetUint32(1, 1)
		b.SetFloat32(2, 1)
		tc.set(b)
		if err := b.check(); err == nil || !strings.Contains(err.Error(), "parameter") {
			t.Errorf("%s: check() = %v, want a type mismatch", tc.name, err)
		}
	}
}

func TestInjectFault(t *testing.T) {
	d := &Driver{lib: "test"}
	d.fn.memFree = 1 // never called: the fault answers first
	d.InjectFault("cuMemFree_v2", 1, ErrorOutOfMemory)
	if err := d.call("cuMemFree_v2", d.fn.memFree); !IsOutOfMemory(err) {
		t.Fatalf("first call: %v, want out of memory", err)
	}
	d.InjectFault("", 0, 0)
	if f := d.fault.Load(); f != nil {
		t.Error("the plan was not cleared")
	}
}
