package cuda

import (
	"encoding/binary"
	"testing"
	"unsafe"
)

func TestMemLocationPacked(t *testing.T) {
	tests := []struct {
		name string
		loc  MemLocation
		want uint64
	}{
		{"device 0", MemLocation{MemLocationDevice, 0}, 0x0000_0000_0000_0001},
		{"device 3", MemLocation{MemLocationDevice, 3}, 0x0000_0003_0000_0001},
		{"host", MemLocation{Type: MemLocationHost}, 0x0000_0000_0000_0002},
		{"host numa 1", MemLocation{MemLocationHostNUMA, 1}, 0x0000_0001_0000_0003},
		{"negative id", MemLocation{MemLocationDevice, -1}, 0xffff_ffff_0000_0001},
		{"max id", MemLocation{MemLocationDevice, 1<<31 - 1}, 0x7fff_ffff_0000_0001},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.loc.packed()
			if uint64(got) != tt.want {
				t.Errorf("packed() = %#x, want %#x", got, tt.want)
			}
			// The register must hold the struct's memory image: a C
			// struct {int type; int id;} read as one 8-byte word.
			type cMemLocation struct{ typ, id int32 }
			c := cMemLocation{int32(tt.loc.Type), tt.loc.ID}
			var img [8]byte
			copy(img[:], unsafe.Slice((*byte)(unsafe.Pointer(&c)), unsafe.Sizeof(c)))
			if w := binary.LittleEndian.Uint64(img[:]); uint64(got) != w {
				t.Errorf("packed() = %#x, struct image %#x", got, w)
			}
		})
	}
}

func TestDeviceMemLocation(t *testing.T) {
	tests := []struct {
		dev  Device
		want MemLocation
	}{
		{0, MemLocation{MemLocationDevice, 0}},
		{2, MemLocation{MemLocationDevice, 2}},
		{CPUDevice, MemLocation{Type: MemLocationHost}},
	}
	for _, tt := range tests {
		if got := tt.dev.MemLocation(); got != tt.want {
			t.Errorf("Device(%d).MemLocation() = %+v, want %+v", tt.dev, got, tt.want)
		}
	}
}

func TestEnumValues(t *testing.T) {
	// Spot checks against cuda.h (12.6 and 13.0 agree); a typo here would
	// silently ask the driver for a different property.
	tests := []struct {
		name      string
		got, want int32
	}{
		{"MaxThreadsPerBlock", int32(MaxThreadsPerBlock), 1},
		{"WarpSize", int32(WarpSize), 10},
		{"MultiprocessorCount", int32(MultiprocessorCount), 16},
		{"PCIBusID", int32(PCIBusID), 33},
		{"GlobalMemoryBusWidth", int32(GlobalMemoryBusWidth), 37},
		{"ComputeCapabilityMajor", int32(ComputeCapabilityMajor), 75},
		{"ManagedMemory", int32(ManagedMemory), 83},
		{"ConcurrentManagedAccess", int32(ConcurrentManagedAccess), 89},
		{"MaxSharedMemoryPerBlockOptin", int32(MaxSharedMemoryPerBlockOptin), 97},
		{"FuncNumRegs", int32(FuncNumRegs), 4},
		{"FuncMaxDynamicSharedSizeBytes", int32(FuncMaxDynamicSharedSizeBytes), 8},
		{"AdviseSetPreferredLocation", int32(AdviseSetPreferredLocation), 3},
		{"AdviseSetAccessedBy", int32(AdviseSetAccessedBy), 5},
		{"MemLocationHost", int32(MemLocationHost), 2},
		{"CU_JIT_ERROR_LOG_BUFFER", jitErrorLogBuffer, 5},
		{"CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES", jitErrorLogBufferSizeBytes, 6},
		{"CU_MEM_ATTACH_GLOBAL", memAttachGlobal, 1},
		{"CU_STREAM_NON_BLOCKING", int32(StreamNonBlocking), 1},
		{"CU_EVENT_DEFAULT", int32(EventDefault), 0},
		{"CU_DEVICE_CPU", int32(CPUDevice), -1},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %d, want %d", tt.name, tt.got, tt.want)
		}
	}
}

func TestDeviceAttributeString(t *testing.T) {
	if got := WarpSize.String(); got != "WarpSize" {
		t.Errorf("WarpSize.String() = %q", got)
	}
	if got := DeviceAttribute(9999).String(); got != "DeviceAttribute(9999)" {
		t.Errorf("String() = %q", got)
	}
}

func TestDevicePtrOffset(t *testing.T) {
	if got := DevicePtr(0x1000).Offset(0x20); got != 0x1020 {
		t.Errorf("Offset = %#x", got)
	}
}

func TestStrings(t *testing.T) {
	tests := []struct{ got, want string }{
		{AdviseSetAccessedBy.String(), "AdviseSetAccessedBy"},
		{Advice(42).String(), "Advice(42)"},
		{CPUDevice.MemLocation().String(), "host"},
		{Device(2).MemLocation().String(), "device 2"},
		{MemLocation{MemLocationHostNUMA, 1}.String(), "host NUMA node 1"},
		{MemLocation{7, 3}.String(), "MemLocation{7, 3}"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}
