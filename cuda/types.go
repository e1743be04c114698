package cuda

import "strconv"

// Device is a CUDA device ordinal handle (CUdevice).
type Device int32

// CPUDevice stands for host memory where a Device is expected, as
// CU_DEVICE_CPU does in cuda.h. MemAdvise and MemPrefetch accept it.
const CPUDevice Device = -1

// Context is a CUDA context handle (CUcontext).
type Context uintptr

// Module is a loaded module handle (CUmodule).
type Module uintptr

// Function is a kernel handle (CUfunction).
type Function uintptr

// Stream is a stream handle (CUstream). The zero Stream is the legacy
// default (NULL) stream, which synchronizes with other blocking streams.
type Stream uintptr

// Event is an event handle (CUevent).
type Event uintptr

// DevicePtr is a device address (CUdeviceptr). Managed memory has the same
// address on the host and on devices.
type DevicePtr uint64

// Offset returns p advanced by n bytes.
func (p DevicePtr) Offset(n uint64) DevicePtr { return p + DevicePtr(n) }

// Dim3 is a grid or block shape for Launch. A zero Y or Z is taken as 1, so
// Dim3{X: n} describes a one-dimensional shape.
type Dim3 struct{ X, Y, Z uint32 }

func (d Dim3) norm() Dim3 {
	if d.Y == 0 {
		d.Y = 1
	}
	if d.Z == 0 {
		d.Z = 1
	}
	return d
}

//go:generate go run golang.org/x/tools/cmd/stringer@v0.51.0 -type=DeviceAttribute,Advice -output types_string.go

// DeviceAttribute selects a device property (CUdevice_attribute). Its
// String is the constant's Go name, or DeviceAttribute(n)
// (types_string.go, generated).
type DeviceAttribute int32

// Device attributes, numbered as in cuda.h (CUDA 12.6 and 13.0 agree).
const (
	MaxThreadsPerBlock               DeviceAttribute = 1
	MaxBlockDimX                     DeviceAttribute = 2
	MaxBlockDimY                     DeviceAttribute = 3
	MaxBlockDimZ                     DeviceAttribute = 4
	MaxGridDimX                      DeviceAttribute = 5
	MaxGridDimY                      DeviceAttribute = 6
	MaxGridDimZ                      DeviceAttribute = 7
	MaxSharedMemoryPerBlock          DeviceAttribute = 8
	TotalConstantMemory              DeviceAttribute = 9
	WarpSize                         DeviceAttribute = 10
	MaxRegistersPerBlock             DeviceAttribute = 12
	ClockRate                        DeviceAttribute = 13 // kHz
	MultiprocessorCount              DeviceAttribute = 16
	Integrated                       DeviceAttribute = 18
	CanMapHostMemory                 DeviceAttribute = 19
	ComputeMode                      DeviceAttribute = 20
	ConcurrentKernels                DeviceAttribute = 31
	ECCEnabled                       DeviceAttribute = 32
	PCIBusID                         DeviceAttribute = 33
	PCIDeviceID                      DeviceAttribute = 34
	MemoryClockRate                  DeviceAttribute = 36 // kHz
	GlobalMemoryBusWidth             DeviceAttribute = 37 // bits
	L2CacheSize                      DeviceAttribute = 38 // bytes
	MaxThreadsPerMultiprocessor      DeviceAttribute = 39
	AsyncEngineCount                 DeviceAttribute = 40
	UnifiedAddressing                DeviceAttribute = 41
	PCIDomainID                      DeviceAttribute = 50
	ComputeCapabilityMajor           DeviceAttribute = 75
	ComputeCapabilityMinor           DeviceAttribute = 76
	MaxSharedMemoryPerMultiprocessor DeviceAttribute = 81
	MaxRegistersPerMultiprocessor    DeviceAttribute = 82
	ManagedMemory                    DeviceAttribute = 83
	PageableMemoryAccess             DeviceAttribute = 88
	ConcurrentManagedAccess          DeviceAttribute = 89
	MaxSharedMemoryPerBlockOptin     DeviceAttribute = 97
	MaxBlocksPerMultiprocessor       DeviceAttribute = 106
)

// FuncAttribute selects a kernel property (CUfunction_attribute).
type FuncAttribute int32

// Function attributes, numbered as in cuda.h.
const (
	FuncMaxThreadsPerBlock            FuncAttribute = 0
	FuncSharedSizeBytes               FuncAttribute = 1 // static shared memory
	FuncConstSizeBytes                FuncAttribute = 2
	FuncLocalSizeBytes                FuncAttribute = 3
	FuncNumRegs                       FuncAttribute = 4
	FuncPTXVersion                    FuncAttribute = 5
	FuncBinaryVersion                 FuncAttribute = 6
	FuncMaxDynamicSharedSizeBytes     FuncAttribute = 8 // settable; needed above 48 KiB
	FuncPreferredSharedMemoryCarveout FuncAttribute = 9 // settable; percent
)

// Advice is a unified-memory usage hint for MemAdvise (CUmem_advise). Its
// String is the constant's Go name, or Advice(n).
type Advice int32

// Memory advice values, numbered as in cuda.h.
const (
	AdviseSetReadMostly          Advice = 1
	AdviseUnsetReadMostly        Advice = 2
	AdviseSetPreferredLocation   Advice = 3
	AdviseUnsetPreferredLocation Advice = 4
	AdviseSetAccessedBy          Advice = 5
	AdviseUnsetAccessedBy        Advice = 6
)

// MemLocationType says what a MemLocation's ID names (CUmemLocationType).
type MemLocationType int32

// Memory location types, numbered as in cuda.h.
const (
	MemLocationInvalid         MemLocationType = 0
	MemLocationDevice          MemLocationType = 1 // ID is a device ordinal
	MemLocationHost            MemLocationType = 2 // ID is ignored
	MemLocationHostNUMA        MemLocationType = 3 // ID is a host NUMA node
	MemLocationHostNUMACurrent MemLocationType = 4 // NUMA node of the calling thread
)

// MemLocation is a place memory can live (CUmemLocation).
type MemLocation struct {
	Type MemLocationType
	ID   int32
}

// String describes l, as in "device 0", "host" or "host NUMA node 1".
func (l MemLocation) String() string {
	id := strconv.Itoa(int(l.ID))
	switch l.Type {
	case MemLocationDevice:
		return "device " + id
	case MemLocationHost:
		return "host"
	case MemLocationHostNUMA:
		return "host NUMA node " + id
	case MemLocationHostNUMACurrent:
		return "host NUMA node of the calling thread"
	}
	return "MemLocation{" + strconv.Itoa(int(l.Type)) + ", " + id + "}"
}

// MemLocation returns the location of d's memory; CPUDevice gives host memory.
func (d Device) MemLocation() MemLocation {
	if d == CPUDevice {
		return MemLocation{Type: MemLocationHost}
	}
	return MemLocation{Type: MemLocationDevice, ID: int32(d)}
}

// packed returns l as one integer-register argument.
//
// cuMemAdvise_v2 and cuMemPrefetchAsync_v2 take a CUmemLocation
// {int type; int id} by value. Under the SysV amd64 ABI (and AAPCS64 on
// arm64) an 8-byte aggregate of integers travels in a single general
// register holding its memory image, so on these little-endian targets the
// argument is type in the low 32 bits and id in the high 32 bits. CUDA 13.4
// turned id into a union with an equally sized {deviceId,
// localityDomainId} pair; the struct is still 8 bytes and the packing
// holds.
func (l MemLocation) packed() uintptr {
	return uintptr(uint64(uint32(l.Type)) | uint64(uint32(l.ID))<<32)
}

// StreamFlags are stream creation flags (CUstream_flags).
type StreamFlags uint32

// Stream creation flags.
const (
	StreamDefault     StreamFlags = 0
	StreamNonBlocking StreamFlags = 1 // no implicit sync with the NULL stream
)

// EventFlags are event creation flags (CUevent_flags).
type EventFlags uint32

// Event creation flags.
const (
	EventDefault       EventFlags = 0
	EventBlockingSync  EventFlags = 1
	EventDisableTiming EventFlags = 2
)

// Managed memory attach flags (CUmemAttach_flags).
const (
	memAttachGlobal = 1
	memAttachHost   = 2
)

// JIT options used by ModuleLoadData (CUjit_option).
const (
	jitErrorLogBuffer          = 5
	jitErrorLogBufferSizeBytes = 6
)
