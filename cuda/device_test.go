package cuda

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// The TestDevice tests need a GPU. Without a driver they skip; with one they
// check every result they can (outputs are poisoned first).

// testPTX holds the kernels of the device tests. PTX 8.0 for sm_80 is
// JIT-compiled by any CUDA 12+ driver for any sm_80+ GPU (A100, H100, ...).
const testPTX = `
.version 8.0
.target sm_80
.address_size 64

.extern .shared .align 16 .b8 dsmem[];

// fill(u32 *out, u32 n): out[i] = 2*i + 1
.visible .entry fill(
	.param .u64 out,
	.param .u32 n
)
{
	.reg .pred %p<2>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<5>;

	ld.param.u64 %rd1, [out];
	ld.param.u32 %r1, [n];
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %tid.x;
	mad.lo.s32 %r5, %r2, %r3, %r4;
	setp.ge.u32 %p1, %r5, %r1;
	@%p1 bra FILL_DONE;
	cvta.to.global.u64 %rd2, %rd1;
	mul.wide.u32 %rd3, %r5, 4;
	add.s64 %rd4, %rd2, %rd3;
	shl.b32 %r6, %r5, 1;
	add.s32 %r7, %r6, 1;
	st.global.u32 [%rd4], %r7;
FILL_DONE:
	ret;
}

// inc(u32 *p, u32 n): p[i] += 1
.visible .entry inc(
	.param .u64 p,
	.param .u32 n
)
{
	.reg .pred %p<2>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<5>;

	ld.param.u64 %rd1, [p];
	ld.param.u32 %r1, [n];
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %tid.x;
	mad.lo.s32 %r5, %r2, %r3, %r4;
	setp.ge.u32 %p1, %r5, %r1;
	@%p1 bra INC_DONE;
	cvta.to.global.u64 %rd2, %rd1;
	mul.wide.u32 %rd3, %r5, 4;
	add.s64 %rd4, %rd2, %rd3;
	ld.global.u32 %r6, [%rd4];
	add.s32 %r7, %r6, 1;
	st.global.u32 [%rd4], %r7;
INC_DONE:
	ret;
}

// echo(out, f32 a, f64 b, s32 c, u64 d, u32 e) stores its scalar
// arguments at out+0 (a), +4 (c), +8 (b), +16 (d), +24 (e).
.visible .entry echo(
	.param .u64 out,
	.param .f32 a,
	.param .f64 b,
	.param .s32 c,
	.param .u64 d,
	.param .u32 e
)
{
	.reg .f32 %f<2>;
	.reg .f64 %fd<2>;
	.reg .b32 %r<3>;
	.reg .b64 %rd<4>;

	ld.param.u64 %rd1, [out];
	cvta.to.global.u64 %rd2, %rd1;
	ld.param.f32 %f1, [a];
	ld.param.f64 %fd1, [b];
	ld.param.s32 %r1, [c];
	ld.param.u64 %rd3, [d];
	ld.param.u32 %r2, [e];
	st.global.f32 [%rd2], %f1;
	st.global.s32 [%rd2+4], %r1;
	st.global.f64 [%rd2+8], %fd1;
	st.global.u64 [%rd2+16], %rd3;
	st.global.u32 [%rd2+24], %r2;
	ret;
}

// rev(u32 *out, u32 nbytes): each block writes thread ids into the top of
// its nbytes of dynamic shared memory and reads them back reversed:
// out[tid] = ntid-1-tid.
.visible .entry rev(
	.param .u64 out,
	.param .u32 nbytes
)
{
	.reg .b32 %r<12>;
	.reg .b64 %rd<5>;

	ld.param.u64 %rd1, [out];
	ld.param.u32 %r10, [nbytes];
	cvta.to.global.u64 %rd2, %rd1;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %ntid.x;
	mov.u32 %r3, dsmem;
	add.s32 %r3, %r3, %r10;
	add.s32 %r4, %r1, 1;
	shl.b32 %r4, %r4, 2;
	sub.s32 %r5, %r3, %r4;
	st.shared.u32 [%r5], %r1;
	bar.sync 0;
	sub.s32 %r6, %r2, %r1;
	shl.b32 %r7, %r6, 2;
	sub.s32 %r8, %r3, %r7;
	ld.shared.u32 %r9, [%r8];
	mul.wide.u32 %rd3, %r1, 4;
	add.s64 %rd4, %rd2, %rd3;
	st.global.u32 [%rd4], %r9;
	ret;
}
`

// brokenPTX uses an instruction that does not exist.
const brokenPTX = `
.version 8.0
.target sm_80
.address_size 64

.visible .entry broken()
{
	.reg .b32 %r<2>;
	mov.u32 %r1, 1;
	frobnicate.u32 %r1, %r1;
	ret;
}
`

const poison = 0xDEADBEEF

// gpu loads the driver, makes device 0's primary context current on a
// locked thread, and undoes it all at cleanup.
func gpu(t *testing.T) (*Driver, Device) {
	t.Helper()
	d, err := Load()
	if errors.Is(err, ErrNoDriver) {
		t.Skip("no CUDA driver: " + err.Error())
	}
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	runtime.LockOSThread()
	dev, err := d.Device(0)
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	ctx, err := d.PrimaryCtxRetain(dev)
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	if err := d.SetCurrent(ctx); err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Synchronize(); err != nil {
			t.Errorf("final Synchronize: %v", err)
		}
		if err := d.SetCurrent(0); err != nil {
			t.Errorf("SetCurrent(0): %v", err)
		}
		if err := d.PrimaryCtxRelease(dev); err != nil {
			t.Errorf("PrimaryCtxRelease: %v", err)
		}
		runtime.UnlockOSThread()
	})
	return d, dev
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func alloc(t *testing.T, d *Driver, bytes uint64) DevicePtr {
	t.Helper()
	p, err := d.MemAlloc(bytes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.MemFree(p); err != nil {
			t.Errorf("MemFree: %v", err)
		}
	})
	return p
}

func download(t *testing.T, d *Driver, p DevicePtr, n int) []uint32 {
	t.Helper()
	out := make([]uint32, n)
	must(t, d.MemcpyDtoH(unsafe.Pointer(&out[0]), p, uint64(4*n)))
	return out
}

// checkWords reports the first few elements of got that differ from want(i).
func checkWords(t *testing.T, what string, got []uint32, want func(i int) uint32) {
	t.Helper()
	bad := 0
	for i, v := range got {
		if w := want(i); v != w {
			if bad < 5 {
				t.Errorf("%s[%d] = %#x, want %#x", what, i, v, w)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements wrong", what, bad, len(got))
	}
}

func loadTestModule(t *testing.T, d *Driver) Module {
	t.Helper()
	m, err := d.ModuleLoadData(testPTX)
	if err != nil {
		t.Fatalf("ModuleLoadData: %v", err)
	}
	t.Cleanup(func() {
		if err := d.ModuleUnload(m); err != nil {
			t.Errorf("ModuleUnload: %v", err)
		}
	})
	return m
}

func kernel(t *testing.T, d *Driver, m Module, name string) Function {
	t.Helper()
	f, err := d.ModuleGetFunction(m, name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestDeviceInfo(t *testing.T) {
	d, _ := gpu(t)
	ver, err := d.Version()
	must(t, err)
	t.Logf("driver supports CUDA %d.%d (%d); library %s", ver/1000, ver%1000/10, ver, d.lib)
	if ver < 12000 {
		t.Errorf("driver version %d below CUDA 12", ver)
	}

	syms := d.Symbols()
	t.Logf("bound %d symbols; elapsed time via %s", len(syms), d.elapsed)
	switch {
	case ver >= 12080 && d.elapsed != "cuEventElapsedTime_v2":
		t.Errorf("driver %d should export cuEventElapsedTime_v2, bound %q", ver, d.elapsed)
	case d.elapsed == "":
		t.Error("no cuEventElapsedTime variant bound")
	}
	if ver >= 12020 {
		for _, s := range []string{"cuMemAdvise_v2", "cuMemPrefetchAsync_v2"} {
			if !slices.Contains(syms, s) {
				t.Errorf("driver %d should export %s", ver, s)
			}
		}
	}

	n, err := d.DeviceCount()
	must(t, err)
	if n < 1 {
		t.Fatalf("DeviceCount = %d after a successful cuInit", n)
	}
	attrs := []DeviceAttribute{
		ComputeCapabilityMajor, ComputeCapabilityMinor, MultiprocessorCount, WarpSize,
		MaxThreadsPerBlock, MaxThreadsPerMultiprocessor, MaxBlockDimX, MaxGridDimX,
		MaxSharedMemoryPerBlock, MaxSharedMemoryPerBlockOptin, MaxSharedMemoryPerMultiprocessor,
		MaxRegistersPerBlock, L2CacheSize, ClockRate, MemoryClockRate, GlobalMemoryBusWidth,
		ManagedMemory, ConcurrentManagedAccess, PageableMemoryAccess, UnifiedAddressing,
		AsyncEngineCount, ECCEnabled, PCIDomainID, PCIBusID, PCIDeviceID, MaxBlocksPerMultiprocessor,
	}
	for i := range n {
		dev, err := d.Device(i)
		must(t, err)
		name, err := d.DeviceName(dev)
		must(t, err)
		mem, err := d.DeviceTotalMem(dev)
		must(t, err)
		t.Logf("device %d: %q, %d MiB", i, name, mem>>20)
		if name == "" || mem == 0 {
			t.Errorf("device %d: name %q, memory %d", i, name, mem)
		}
		got := map[DeviceAttribute]int{}
		for _, a := range attrs {
			v, err := d.DeviceAttribute(dev, a)
			if err != nil {
				t.Errorf("device %d: %v", i, err)
				continue
			}
			got[a] = v
			t.Logf("  %-32v %d", a, v)
		}
		if got[WarpSize] != 32 {
			t.Errorf("WarpSize = %d", got[WarpSize])
		}
		if got[ComputeCapabilityMajor] < 5 || got[MultiprocessorCount] < 1 || got[MaxThreadsPerBlock] < 512 {
			t.Errorf("implausible attributes %v", got)
		}
		if got[MaxSharedMemoryPerBlockOptin] < got[MaxSharedMemoryPerBlock] {
			t.Errorf("optin shared %d < default %d", got[MaxSharedMemoryPerBlockOptin], got[MaxSharedMemoryPerBlock])
		}
	}

	if _, err := d.Device(n); err == nil {
		t.Errorf("Device(%d) of %d succeeded", n, n)
	} else {
		var e *Error
		if !errors.As(err, &e) || e.Code != ErrorInvalidDevice {
			t.Errorf("Device(%d): %v, want CUDA_ERROR_INVALID_DEVICE", n, err)
		}
	}
	if _, err := d.DeviceAttribute(0, DeviceAttribute(100000)); err == nil {
		t.Error("bogus attribute accepted")
	}
}

// The built-in table must agree with the driver's cuGetErrorName and
// cuGetErrorString (identical on driver 580, CUDA 13.0).
func TestDeviceErrorTable(t *testing.T) {
	d, err := Load()
	if errors.Is(err, ErrNoDriver) {
		t.Skip("no CUDA driver: " + err.Error())
	}
	must(t, err)
	for _, e := range resultTable() {
		live := d.error("op", e.code)
		if live.Name != e.name {
			t.Errorf("code %d: driver name %q, table %q", e.code, live.Name, e.name)
		}
		if live.Msg != e.msg {
			t.Errorf("code %d (%s): driver message %q, table %q", e.code, e.name, live.Msg, e.msg)
		}
	}
	// A code the driver does not know keeps the table's generic name.
	if e := d.error("op", 54321); e.Name != "CUDA_ERROR_54321" {
		t.Errorf("unknown code named %q", e.Name)
	}
}

func TestDeviceContextStack(t *testing.T) {
	d, dev := gpu(t)
	ctx, err := d.PrimaryCtxRetain(dev)
	must(t, err)
	defer func() { must(t, d.PrimaryCtxRelease(dev)) }()

	must(t, d.PushCurrent(ctx))
	popped, err := d.PopCurrent()
	must(t, err)
	if popped != ctx {
		t.Errorf("PopCurrent = %#x, pushed %#x", popped, ctx)
	}

	// WithContext runs fn on a thread where ctx is current.
	var free uint64
	err = d.WithContext(ctx, func() error {
		var err error
		free, _, err = d.MemGetInfo()
		return err
	})
	must(t, err)
	if free == 0 {
		t.Error("MemGetInfo inside WithContext: no free memory")
	}
	sentinel := errors.New("from fn")
	if err := d.WithContext(ctx, func() error { return sentinel }); err != sentinel {
		t.Errorf("WithContext error = %v", err)
	}
}

func TestDeviceMemory(t *testing.T) {
	d, dev := gpu(t)

	free, total, err := d.MemGetInfo()
	must(t, err)
	devTotal, err := d.DeviceTotalMem(dev)
	must(t, err)
	t.Logf("MemGetInfo: %d MiB free of %d MiB (device reports %d MiB)", free>>20, total>>20, devTotal>>20)
	if total == 0 || free > total || total != devTotal {
		t.Errorf("MemGetInfo = %d free, %d total; DeviceTotalMem %d", free, total, devTotal)
	}

	const n = 1<<20 + 3 // not a multiple of anything convenient
	a := alloc(t, d, 4*n)
	b := alloc(t, d, 4*n)
	if a == 0 || b == 0 || a == b {
		t.Fatalf("MemAlloc returned %#x, %#x", a, b)
	}

	must(t, d.MemsetD32(a, poison, n))
	checkWords(t, "after MemsetD32", download(t, d, a, n), func(int) uint32 { return poison })

	host := make([]uint32, n)
	for i := range host {
		host[i] = uint32(i)*2654435761 + 12345
	}
	must(t, d.MemcpyHtoD(a, unsafe.Pointer(&host[0]), 4*n))
	must(t, d.MemsetD32(b, poison, n))
	must(t, d.MemcpyDtoD(b, a, 4*n))
	checkWords(t, "HtoD/DtoD/DtoH round trip", download(t, d, b, n), func(i int) uint32 { return host[i] })

	// MemsetD8 on an unaligned byte range inside b.
	const off, cnt = 5, 1001
	must(t, d.MemsetD8(b.Offset(off), 0xA5, cnt))
	bytes := make([]byte, 4*n)
	must(t, d.MemcpyDtoH(unsafe.Pointer(&bytes[0]), b, 4*n))
	for i, v := range bytes {
		want := byte(host[i/4] >> (8 * (i % 4)))
		if i >= off && i < off+cnt {
			want = 0xA5
		}
		if v != want {
			t.Fatalf("after MemsetD8 byte %d = %#x, want %#x", i, v, want)
		}
	}

	// Allocation failures are recognizable.
	_, err = d.MemAlloc(1 << 60)
	if !IsOutOfMemory(err) {
		t.Errorf("MemAlloc(1<<60) = %v, want out of memory", err)
	} else {
		t.Logf("expected failure: %v", err)
	}

	// Pinned host memory round trip.
	hp, err := d.MemAllocHost(4 * n)
	must(t, err)
	pinned := unsafe.Slice((*uint32)(hp), n)
	for i := range pinned {
		pinned[i] = ^uint32(i)
	}
	must(t, d.MemcpyHtoD(a, hp, 4*n))
	clear(pinned)
	must(t, d.MemcpyDtoH(hp, a, 4*n))
	checkWords(t, "pinned round trip", pinned, func(i int) uint32 { return ^uint32(i) })
	must(t, d.MemFreeHost(hp))
}

func TestDeviceLaunch(t *testing.T) {
	d, _ := gpu(t)
	m := loadTestModule(t, d)
	fill := kernel(t, d, m, "fill")

	regs, err := d.FuncGetAttribute(fill, FuncNumRegs)
	must(t, err)
	maxThreads, err := d.FuncGetAttribute(fill, FuncMaxThreadsPerBlock)
	must(t, err)
	static, err := d.FuncGetAttribute(fill, FuncSharedSizeBytes)
	must(t, err)
	t.Logf("fill: %d registers, max %d threads/block, %d static shared bytes", regs, maxThreads, static)
	if regs < 1 || maxThreads < 256 {
		t.Errorf("fill attributes: regs %d, max threads %d", regs, maxThreads)
	}

	const n, pad = 100_003, 64 // n is not a multiple of the block size
	out := alloc(t, d, 4*(n+pad))
	must(t, d.MemsetD32(out, poison, n+pad))

	args := NewArgs(2)
	args.SetPtr(0, out)
	args.SetUint32(1, n)
	const block = 256
	must(t, d.Launch(fill, Dim3{X: (n + block - 1) / block}, Dim3{X: block}, 0, 0, args))
	must(t, d.Synchronize())
	got := download(t, d, out, n+pad)
	checkWords(t, "fill", got[:n], func(i int) uint32 { return uint32(2*i + 1) })
	checkWords(t, "fill guard", got[n:], func(int) uint32 { return poison })

	// Reuse the same Args for a second launch with other values.
	must(t, d.MemsetD32(out, poison, n+pad))
	args.SetUint32(1, 1000)
	must(t, d.Launch(fill, Dim3{X: 4}, Dim3{X: block}, 0, 0, args))
	must(t, d.Synchronize())
	got = download(t, d, out, n+pad)
	checkWords(t, "refill", got, func(i int) uint32 {
		if i < 1000 {
			return uint32(2*i + 1)
		}
		return poison
	})

	// Every setter type reaches the kernel intact, despite the PTX
	// parameter layout padding the f64 after the f32.
	echo := kernel(t, d, m, "echo")
	eout := alloc(t, d, 32)
	must(t, d.MemsetD32(eout, poison, 8))
	ea := NewArgs(6)
	ea.SetPtr(0, eout)
	ea.SetFloat32(1, -1.75)
	ea.SetFloat64(2, math.Pi)
	ea.SetInt32(3, -123456)
	ea.SetUint64(4, 0x0123_4567_89ab_cdef)
	ea.SetUint32(5, 0xfeed_f00d)
	must(t, d.Launch(echo, Dim3{X: 1}, Dim3{X: 1}, 0, 0, ea))
	must(t, d.Synchronize())
	var raw [32]byte
	must(t, d.MemcpyDtoH(unsafe.Pointer(&raw[0]), eout, 32))
	if v := *(*float32)(unsafe.Pointer(&raw[0])); v != -1.75 {
		t.Errorf("echo float32 = %v", v)
	}
	if v := *(*int32)(unsafe.Pointer(&raw[4])); v != -123456 {
		t.Errorf("echo int32 = %v", v)
	}
	if v := *(*float64)(unsafe.Pointer(&raw[8])); v != math.Pi {
		t.Errorf("echo float64 = %v", v)
	}
	if v := *(*uint64)(unsafe.Pointer(&raw[16])); v != 0x0123_4567_89ab_cdef {
		t.Errorf("echo uint64 = %#x", v)
	}
	if v := *(*uint32)(unsafe.Pointer(&raw[24])); v != 0xfeed_f00d {
		t.Errorf("echo uint32 = %#x", v)
	}
	if v := *(*uint32)(unsafe.Pointer(&raw[28])); v != poison {
		t.Errorf("echo wrote past its output: %#x", v)
	}

	// Errors: an unknown kernel name, an unset argument, a bad launch shape.
	if _, err := d.ModuleGetFunction(m, "nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("ModuleGetFunction(nope) = %v", err)
	} else {
		var e *Error
		if !errors.As(err, &e) || e.Code != ErrorNotFound {
			t.Errorf("ModuleGetFunction(nope) = %v, want CUDA_ERROR_NOT_FOUND", err)
		}
	}
	if err := d.Launch(fill, Dim3{X: 1}, Dim3{X: 1}, 0, 0, NewArgs(2)); err == nil {
		t.Error("launch with unset arguments succeeded")
	}
	if err := d.Launch(fill, Dim3{X: 1}, Dim3{X: uint32(maxThreads) + 1}, 0, 0, args); err == nil {
		t.Error("launch with too many threads per block succeeded")
	} else {
		t.Logf("expected failure: %v", err)
	}
	must(t, d.Synchronize())
}

func TestDeviceDynamicShared(t *testing.T) {
	d, dev := gpu(t)
	m := loadTestModule(t, d)
	rev := kernel(t, d, m, "rev")

	optin, err := d.DeviceAttribute(dev, MaxSharedMemoryPerBlockOptin)
	must(t, err)
	static, err := d.FuncGetAttribute(rev, FuncSharedSizeBytes)
	must(t, err)
	shared := min(96<<10, optin-static) // above the 48 KiB default limit
	if shared <= 48<<10 {
		t.Skipf("device opts in to only %d bytes of shared memory", optin)
	}

	const threads = 512
	out := alloc(t, d, 4*threads)
	args := NewArgs(2)
	args.SetPtr(0, out)
	args.SetUint32(1, uint32(shared))

	// Above 48 KiB the kernel must opt in first.
	if err := d.Launch(rev, Dim3{X: 1}, Dim3{X: threads}, uint32(shared), 0, args); err == nil {
		t.Errorf("launch with %d shared bytes succeeded without opt-in", shared)
	} else {
		t.Logf("expected failure: %v", err)
	}

	must(t, d.FuncSetAttribute(rev, FuncMaxDynamicSharedSizeBytes, shared))
	v, err := d.FuncGetAttribute(rev, FuncMaxDynamicSharedSizeBytes)
	must(t, err)
	if v != shared {
		t.Errorf("FuncMaxDynamicSharedSizeBytes = %d after setting %d", v, shared)
	}
	must(t, d.MemsetD32(out, poison, threads))
	must(t, d.Launch(rev, Dim3{X: 1}, Dim3{X: threads}, uint32(shared), 0, args))
	must(t, d.Synchronize())
	checkWords(t, "rev", download(t, d, out, threads), func(i int) uint32 { return uint32(threads - 1 - i) })
}

func TestDeviceBrokenPTX(t *testing.T) {
	d, _ := gpu(t)
	m, err := d.ModuleLoadData(brokenPTX)
	if err == nil {
		d.ModuleUnload(m)
		t.Fatal("broken PTX loaded")
	}
	t.Logf("expected failure: %v", err)
	var e *Error
	if !errors.As(err, &e) || e.Code != ErrorInvalidPTX {
		t.Errorf("error %v, want CUDA_ERROR_INVALID_PTX", err)
	}
	msg := err.Error()
	for _, want := range []string{"JIT log", "frobnicate", "line 10"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error does not contain %q: %s", want, msg)
		}
	}
}

func TestDeviceStreamsEvents(t *testing.T) {
	d, _ := gpu(t)
	m := loadTestModule(t, d)
	inc := kernel(t, d, m, "inc")

	s, err := d.StreamCreate(StreamNonBlocking)
	must(t, err)
	defer func() { must(t, d.StreamDestroy(s)) }()
	start, err := d.EventCreate(EventDefault)
	must(t, err)
	defer func() { must(t, d.EventDestroy(start)) }()
	end, err := d.EventCreate(EventDefault)
	must(t, err)
	defer func() { must(t, d.EventDestroy(end)) }()

	const n = 1 << 22
	buf := alloc(t, d, 4*n)
	buf2 := alloc(t, d, 4*n)
	hp, err := d.MemAllocHost(4 * n)
	must(t, err)
	defer func() { must(t, d.MemFreeHost(hp)) }()
	host := unsafe.Slice((*uint32)(hp), n)
	for i := range host {
		host[i] = uint32(3 * i)
	}

	args := NewArgs(2)
	args.SetPtr(0, buf)
	args.SetUint32(1, n)
	must(t, d.EventRecord(start, s))
	must(t, d.MemsetD32Async(buf, poison, n, s))
	must(t, d.MemcpyHtoDAsync(buf, hp, 4*n, s))
	const reps = 10
	for range reps {
		must(t, d.Launch(inc, Dim3{X: n / 256}, Dim3{X: 256}, 0, s, args))
	}
	must(t, d.MemsetD8Async(buf2, 0xFF, 4*n, s))
	must(t, d.MemcpyDtoDAsync(buf2, buf, 4*n-4, s)) // leave the last word 0xFFFFFFFF
	must(t, d.MemcpyDtoHAsync(hp, buf2, 4*n, s))
	must(t, d.EventRecord(end, s))
	must(t, d.StreamSynchronize(s))
	must(t, d.EventSynchronize(end))

	checkWords(t, "async pipeline", host, func(i int) uint32 {
		if i == n-1 {
			return math.MaxUint32
		}
		return uint32(3*i) + reps
	})

	el, err := d.EventElapsed(start, end)
	must(t, err)
	t.Logf("stream work took %v (%s)", el, d.elapsed)
	if el <= 0 || el > 10*time.Second {
		t.Errorf("EventElapsed = %v", el)
	}
	if _, err := d.EventElapsed(end, start); err != nil {
		t.Logf("reversed events: %v", err)
	}

	// Asynchronous copies from and to Go memory work too (staged by the driver).
	gm := make([]uint32, 1024)
	for i := range gm {
		gm[i] = uint32(i) ^ 0x5555
	}
	must(t, d.MemcpyHtoDAsync(buf, unsafe.Pointer(&gm[0]), 4*1024, s))
	back := make([]uint32, 1024)
	must(t, d.MemcpyDtoHAsync(unsafe.Pointer(&back[0]), buf, 4*1024, s))
	must(t, d.StreamSynchronize(s))
	checkWords(t, "async Go memory", back, func(i int) uint32 { return uint32(i) ^ 0x5555 })
}

// managedView is the host view of managed memory: its device address is a
// host address too.
func managedView(p DevicePtr, n int) []uint32 {
	return unsafe.Slice((*uint32)(*(*unsafe.Pointer)(unsafe.Pointer(&p))), n)
}

func TestDeviceManaged(t *testing.T) {
	d, dev := gpu(t)
	if v, err := d.DeviceAttribute(dev, ManagedMemory); err != nil || v == 0 {
		t.Skipf("no managed memory (%d, %v)", v, err)
	}
	concurrent, err := d.DeviceAttribute(dev, ConcurrentManagedAccess)
	must(t, err)

	const n = 1 << 20 // 4 MiB
	p, err := d.MemAllocManaged(4*n, true)
	must(t, err)
	defer func() { must(t, d.MemFree(p)) }()
	host := managedView(p, n)
	for i := range host {
		host[i] = poison
	}

	m := loadTestModule(t, d)
	fill := kernel(t, d, m, "fill")
	s, err := d.StreamCreate(StreamNonBlocking)
	must(t, err)
	defer func() { must(t, d.StreamDestroy(s)) }()

	if concurrent != 0 {
		must(t, d.MemAdvise(p, 4*n, AdviseSetPreferredLocation, dev))
		must(t, d.MemAdvise(p, 4*n, AdviseSetAccessedBy, dev))
		must(t, d.MemAdvise(p, 4*n, AdviseSetAccessedBy, CPUDevice))
		must(t, d.MemPrefetch(p, 4*n, dev, s))
	} else {
		t.Log("no concurrent managed access: skipping advice and prefetch")
	}

	args := NewArgs(2)
	args.SetPtr(0, p)
	args.SetUint32(1, n-1) // the last word stays poisoned
	must(t, d.Launch(fill, Dim3{X: n / 256}, Dim3{X: 256}, 0, s, args))
	if concurrent != 0 {
		must(t, d.MemPrefetch(p, 4*n, CPUDevice, s))
	}
	must(t, d.StreamSynchronize(s))
	checkWords(t, "managed fill", host, func(i int) uint32 {
		if i == n-1 {
			return poison
		}
		return uint32(2*i + 1)
	})

	if concurrent != 0 {
		must(t, d.MemAdvise(p, 4*n, AdviseUnsetPreferredLocation, dev))
		must(t, d.MemAdvise(p, 4*n, AdviseSetPreferredLocation, CPUDevice))
		must(t, d.MemAdvise(p, 4*n, AdviseSetReadMostly, dev))
		must(t, d.MemAdviseAt(p, 4*n, AdviseUnsetReadMostly, MemLocation{Type: MemLocationHost}))
		// Reading the data on the device after read-mostly advice still works.
		must(t, d.MemPrefetch(p, 4*n, dev, s))
		must(t, d.StreamSynchronize(s))
		got := download(t, d, p, 8)
		checkWords(t, "managed via MemcpyDtoH", got, func(i int) uint32 { return uint32(2*i + 1) })
		// An invalid location is rejected, not misread.
		if err := d.MemAdviseAt(p, 4*n, AdviseSetPreferredLocation, MemLocation{Type: MemLocationDevice, ID: 9999}); err == nil {
			t.Error("advice for device 9999 accepted")
		} else {
			t.Logf("expected failure: %v", err)
		}
	}
}

// Goroutines sharing one Driver and one context, each on its own locked
// thread through WithContext.
func TestDeviceConcurrent(t *testing.T) {
	d, dev := gpu(t)
	m := loadTestModule(t, d)
	fill := kernel(t, d, m, "fill")
	ctx, err := d.PrimaryCtxRetain(dev)
	must(t, err)
	defer func() { must(t, d.PrimaryCtxRelease(dev)) }()

	const workers, n = 8, 1 << 16
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			errs <- d.WithContext(ctx, func() error {
				s, err := d.StreamCreate(StreamNonBlocking)
				if err != nil {
					return err
				}
				defer d.StreamDestroy(s)
				p, err := d.MemAlloc(4 * n)
				if err != nil {
					return err
				}
				defer d.MemFree(p)
				for rep := range 20 {
					if err := d.MemsetD32Async(p, poison, n, s); err != nil {
						return err
					}
					args := NewArgs(2)
					args.SetPtr(0, p)
					args.SetUint32(1, n)
					if err := d.Launch(fill, Dim3{X: n / 128}, Dim3{X: 128}, 0, s, args); err != nil {
						return err
					}
					out := make([]uint32, n)
					if err := d.MemcpyDtoHAsync(unsafe.Pointer(&out[0]), p, 4*n, s); err != nil {
						return err
					}
					if err := d.StreamSynchronize(s); err != nil {
						return err
					}
					for i, v := range out {
						if v != uint32(2*i+1) {
							return fmt.Errorf("worker %d rep %d: out[%d] = %#x", w, rep, i, v)
						}
					}
				}
				return nil
			})
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
