package cuda

import (
	"errors"
	"strings"
	"testing"
	"unsafe"
)

func TestLoadNoDriver(t *testing.T) {
	d, err := Load()
	if err == nil {
		t.Skipf("a CUDA driver is present (%v)", d.Symbols()[0])
	}
	var se *SymbolError
	if errors.As(err, &se) {
		t.Fatalf("Load found a driver lacking symbols: %v", err)
	}
	if !errors.Is(err, ErrNoDriver) {
		t.Fatalf("Load() error = %v, want one wrapping ErrNoDriver", err)
	}
	if d != nil {
		t.Errorf("Load() returned a Driver with error %v", err)
	}
	checkOneLine(t, err)
}

func TestOpenMissingLibrary(t *testing.T) {
	d, err := open([]string{"/nonexistent/libcuda.so.1", "libcuda-does-not-exist.so"})
	if d != nil || !errors.Is(err, ErrNoDriver) {
		t.Fatalf("open = %v, %v; want nil, ErrNoDriver", d, err)
	}
	checkOneLine(t, err)
	for _, want := range []string{"no usable CUDA driver", "/nonexistent/libcuda.so.1", "libcuda-does-not-exist.so"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestOpenNotLibcuda(t *testing.T) {
	// libc opens fine but exports no CUDA symbol: Load must name the missing
	// ones instead of crashing or claiming there is no driver.
	d, err := open([]string{"libc.so.6"})
	if errors.Is(err, ErrNoDriver) {
		t.Skipf("libc.so.6 not loadable here: %v", err)
	}
	var se *SymbolError
	if d != nil || !errors.As(err, &se) {
		t.Fatalf("open(libc.so.6) = %v, %v; want *SymbolError", d, err)
	}
	checkOneLine(t, err)
	if se.Lib != "libc.so.6" || len(se.Missing) == 0 || se.Missing[0] != "cuInit" {
		t.Errorf("SymbolError = %+v", se)
	}
	for _, m := range se.Missing {
		if m == "cuMemAdvise_v2" || m == "cuMemPrefetchAsync_v2" {
			t.Errorf("optional symbol %s reported missing", m)
		}
	}
	if !strings.Contains(err.Error(), "cuEventElapsedTime_v2 or cuEventElapsedTime") {
		t.Errorf("error %q does not name both elapsed-time candidates", err)
	}
}

func checkOneLine(t *testing.T, err error) {
	t.Helper()
	if s := err.Error(); strings.ContainsAny(s, "\r\n") {
		t.Errorf("error spans lines: %q", s)
	}
}

func TestSymbolTable(t *testing.T) {
	var f funcs
	var elapsed string
	table := symbolTable(&f, &elapsed)

	seenName := map[string]bool{}
	seenAddr := map[*uintptr]bool{}
	for _, s := range table {
		if len(s.names) == 0 {
			t.Errorf("symbol with no names: %+v", s)
		}
		for _, n := range s.names {
			if n == "" || strings.TrimSpace(n) != n || !strings.HasPrefix(n, "cu") {
				t.Errorf("bad symbol name %q", n)
			}
			if seenName[n] {
				t.Errorf("symbol %s listed twice", n)
			}
			seenName[n] = true
		}
		if s.addr == nil || seenAddr[s.addr] {
			t.Errorf("%v: nil or shared destination", s.names)
		}
		seenAddr[s.addr] = true
	}

	// Every field of funcs is bound exactly once.
	if got, want := len(seenAddr), int(unsafe.Sizeof(f)/unsafe.Sizeof(uintptr(0))); got != want {
		t.Errorf("table binds %d entry points, funcs has %d", got, want)
	}

	// The versioned ABIs cuda.h maps to must be bound, never the old names.
	for _, v := range []string{
		"cuMemAlloc_v2", "cuMemFree_v2", "cuMemGetInfo_v2", "cuDeviceTotalMem_v2",
		"cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2", "cuMemcpyDtoD_v2",
		"cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2", "cuMemcpyDtoDAsync_v2",
		"cuMemsetD8_v2", "cuMemsetD32_v2", "cuMemAllocHost_v2",
		"cuStreamDestroy_v2", "cuEventDestroy_v2", "cuDevicePrimaryCtxRelease_v2",
		"cuCtxPushCurrent_v2", "cuCtxPopCurrent_v2",
		"cuMemAdvise_v2", "cuMemPrefetchAsync_v2", "cuEventElapsedTime_v2",
	} {
		if !seenName[v] {
			t.Errorf("versioned symbol %s not in table", v)
		}
		if old := strings.TrimSuffix(v, "_v2"); seenName[old] && old != "cuEventElapsedTime" {
			t.Errorf("unversioned ABI %s in table", old)
		}
	}
	// Functions that never had a versioned ABI.
	for _, n := range []string{"cuDevicePrimaryCtxRetain", "cuMemsetD8Async", "cuMemsetD32Async",
		"cuMemAllocManaged", "cuMemFreeHost", "cuLaunchKernel", "cuModuleLoadDataEx", "cuStreamWaitEvent"} {
		if !seenName[n] {
			t.Errorf("symbol %s not in table", n)
		}
	}

	for _, s := range table {
		switch s.names[0] {
		case "cuMemAdvise_v2", "cuMemPrefetchAsync_v2":
			if !s.optional {
				t.Errorf("%s must be optional (CUDA 12.2+)", s.names[0])
			}
		case "cuEventElapsedTime_v2":
			if len(s.names) != 2 || s.names[1] != "cuEventElapsedTime" || s.optional || s.bound != &elapsed {
				t.Errorf("elapsed time symbol = %+v", s)
			}
		default:
			if s.optional {
				t.Errorf("%s unexpectedly optional", s.names[0])
			}
		}
	}
}

// A nil *Driver, as a failed Load leaves behind, must fail softly.
func TestNilDriver(t *testing.T) {
	var d *Driver
	checks := map[string]error{}
	_, checks["Version"] = d.Version()
	_, checks["DeviceCount"] = d.DeviceCount()
	_, checks["Device"] = d.Device(0)
	_, checks["DeviceName"] = d.DeviceName(0)
	_, checks["DeviceAttribute"] = d.DeviceAttribute(0, WarpSize)
	_, checks["DeviceTotalMem"] = d.DeviceTotalMem(0)
	_, checks["PrimaryCtxRetain"] = d.PrimaryCtxRetain(0)
	checks["PrimaryCtxRelease"] = d.PrimaryCtxRelease(0)
	checks["SetCurrent"] = d.SetCurrent(0)
	checks["Synchronize"] = d.Synchronize()
	_, _, checks["MemGetInfo"] = d.MemGetInfo()
	_, checks["MemAlloc"] = d.MemAlloc(8)
	_, checks["MemAllocHost"] = d.MemAllocHost(8)
	var buf [8]byte
	checks["MemcpyHtoD"] = d.MemcpyHtoD(0, unsafe.Pointer(&buf[0]), 8)
	checks["MemAdvise"] = d.MemAdvise(0, 8, AdviseSetReadMostly, 0)
	checks["MemPrefetch"] = d.MemPrefetch(0, 8, CPUDevice, 0)
	_, checks["ModuleLoadData"] = d.ModuleLoadData(".version 8.0")
	_, checks["ModuleGetFunction"] = d.ModuleGetFunction(0, "k")
	_, checks["StreamCreate"] = d.StreamCreate(StreamNonBlocking)
	_, checks["EventElapsed"] = d.EventElapsed(0, 0)
	checks["Launch"] = d.Launch(0, Dim3{X: 1}, Dim3{X: 1}, 0, 0, nil)
	checks["WithContext"] = d.WithContext(0, func() error { return nil })
	for name, err := range checks {
		if !errors.Is(err, ErrNoDriver) {
			t.Errorf("%s on nil Driver: %v, want ErrNoDriver", name, err)
		}
	}
	if d.Symbols() != nil {
		t.Error("Symbols on nil Driver not nil")
	}
}

func TestGoString(t *testing.T) {
	b := []byte("CUDA_ERROR_OUT_OF_MEMORY\x00junk")
	if got := goString(&b[0]); got != "CUDA_ERROR_OUT_OF_MEMORY" {
		t.Errorf("goString = %q", got)
	}
	if got := goString(nil); got != "" {
		t.Errorf("goString(nil) = %q", got)
	}
	if got := cString("ab"); string(got) != "ab\x00" {
		t.Errorf("cString = %q", got)
	}
}
