package gpu

import (
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/internal/kernels"
	"github.com/geoknn/geoknn/internal/trace"
)

// DeviceInfo describes one GPU.
type DeviceInfo struct {
	Ordinal           int
	Name              string
	Multiprocessors   int
	ComputeCapability [2]int
	ClockMHz          int
	TotalMemory       uint64
	MemoryBusBits     int
	MemoryClockMHz    int
	L2Bytes           int
}

// FP32PeakFLOPS is the device's peak float32 rate, counting a fused
// multiply-add as two operations (128 lanes per multiprocessor from compute
// capability 8.6 on; 64 on 8.0).
func (d DeviceInfo) FP32PeakFLOPS() float64 {
	lanes := 128.0
	if d.ComputeCapability == [2]int{8, 0} {
		lanes = 64
	}
	return 2 * lanes * float64(d.Multiprocessors) * float64(d.ClockMHz) * 1e6
}

func (d DeviceInfo) String() string {
	return fmt.Sprintf("#%d %s (%d SMs, sm_%d%d, %.0f GiB)", d.Ordinal, d.Name, d.Multiprocessors,
		d.ComputeCapability[0], d.ComputeCapability[1], float64(d.TotalMemory)/(1<<30))
}

// ListDevices loads the driver and describes every GPU; it also returns the
// driver's CUDA version (e.g. 13000).
func ListDevices() ([]DeviceInfo, int, error) {
	drv, err := cuda.Load()
	if err != nil {
		return nil, 0, err
	}
	version, err := drv.Version()
	if err != nil {
		return nil, 0, err
	}
	n, err := drv.DeviceCount()
	if err != nil {
		return nil, version, err
	}
	infos := make([]DeviceInfo, n)
	for i := range infos {
		if infos[i], err = describe(drv, i); err != nil {
			return nil, version, err
		}
	}
	return infos, version, nil
}

func describe(drv *cuda.Driver, ordinal int) (DeviceInfo, error) {
	dev, err := drv.Device(ordinal)
	if err != nil {
		return DeviceInfo{}, err
	}
	info := DeviceInfo{Ordinal: ordinal}
	if info.Name, err = drv.DeviceName(dev); err != nil {
		return info, err
	}
	if info.TotalMemory, err = drv.DeviceTotalMem(dev); err != nil {
		return info, err
	}
	attrs := []struct {
		a   cuda.DeviceAttribute
		dst *int
	}{
		{cuda.MultiprocessorCount, &info.Multiprocessors},
		{cuda.ComputeCapabilityMajor, &info.ComputeCapability[0]},
		{cuda.ComputeCapabilityMinor, &info.ComputeCapability[1]},
		{cuda.ClockRate, &info.ClockMHz},
		{cuda.GlobalMemoryBusWidth, &info.MemoryBusBits},
		{cuda.MemoryClockRate, &info.MemoryClockMHz},
		{cuda.L2CacheSize, &info.L2Bytes},
	}
	for _, a := range attrs {
		if *a.dst, err = drv.DeviceAttribute(dev, a.a); err != nil {
			return info, fmt.Errorf("device %d: %v: %w", ordinal, a.a, err)
		}
	}
	info.ClockMHz /= 1000
	info.MemoryClockMHz /= 1000
	return info, nil
}

// gpuDevice is one GPU's context, kernels and reusable buffers. Every method
// runs on an OS thread where its context is current (onThread).
type gpuDevice struct {
	drv    *cuda.Driver
	info   DeviceInfo
	dev    cuda.Device
	ctx    cuda.Context
	memory MemoryMode

	brute    [2]bruteKernels // [0] float64 input, [1] float32 input
	seed     [2]seedKernels
	grid     *gridKernels
	resident *residentKernels
	knn      *knnKernels
	generate *generateKernels
	move     *moveKernels
	tree     *treeKernels
	cells    *cellsKernels
	valid    *validKernels
	mods     []cuda.Module

	// ready is closed once open has run; openErr is its error.
	ready   chan struct{}
	openErr error

	refs           deviceRefs
	slots          [slotsPerGPU]*slot
	evIdx0, evIdx1 cuda.Event // around the index build
	// evClock, recorded when a traced query starts, was reached at clockAt
	// on the host's clock: device events are placed on the trace from it.
	evClock cuda.Event
	clockAt time.Time
}

// onThread runs fn on a locked OS thread of its own with the device's
// context current (before open there is none yet: open makes it current),
// so the caller's thread is neither locked nor left with a context.
func (d *gpuDevice) onThread(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		if d.ctx == 0 {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			errc <- fn()
			return
		}
		errc <- d.drv.WithContext(d.ctx, fn)
	}()
	return <-errc
}

func (d *gpuDevice) open(ordinal int, memory MemoryMode, trc *trace.Recorder) error {
	track := fmt.Sprintf("host: GPU %d", ordinal)
	end := trc.Begin(track, "context")
	err := d.openContext(ordinal, memory)
	end()
	if err != nil {
		return err
	}
	end = trc.Begin(track, "modules")
	mods, err := d.loadModules()
	end()
	if err != nil {
		return err
	}
	if err := d.loadKernels(mods); err != nil {
		return err
	}
	for _, e := range []*cuda.Event{&d.evIdx0, &d.evIdx1, &d.evClock} {
		if *e, err = d.drv.EventCreate(cuda.EventDefault); err != nil {
			return err
		}
	}
	for i := range d.slots {
		if d.slots[i], err = newSlot(d.drv); err != nil {
			return err
		}
		d.slots[i].track = fmt.Sprintf("GPU %d slot %d", ordinal, i)
	}
	return nil
}

// openContext describes the GPU, checks it can run the kernels in the
// memory mode asked for, and makes its primary context current.
func (d *gpuDevice) openContext(ordinal int, memory MemoryMode) error {
	var err error
	if d.info.ComputeCapability[0] < 8 { // d.info: described when the engine opened
		return fmt.Errorf("%s has compute capability %d.%d; geoknn's kernels need 8.0 or newer",
			d.info.Name, d.info.ComputeCapability[0], d.info.ComputeCapability[1])
	}
	if d.dev, err = d.drv.Device(ordinal); err != nil {
		return err
	}
	if d.ctx, err = d.drv.PrimaryCtxRetain(d.dev); err != nil {
		return err
	}
	if err = d.drv.SetCurrent(d.ctx); err != nil {
		return err
	}
	d.memory = memory
	if memory != ManagedMemory {
		return nil
	}
	ok, err := d.drv.DeviceAttribute(d.dev, cuda.ConcurrentManagedAccess)
	if err != nil {
		return err
	}
	if ok == 0 {
		return fmt.Errorf("%s does not support concurrent managed access; use device memory", d.info.Name)
	}
	return nil
}

// loadModules loads every kernel file's module: its machine code when the
// binary carries some for this GPU, else its PTX, JIT-compiled.
func (d *gpuDevice) loadModules() (map[string]cuda.Module, error) {
	mods := map[string]cuda.Module{}
	for _, name := range kernels.Files {
		m, err := d.loadModule(name)
		if err != nil {
			return nil, err
		}
		d.mods = append(d.mods, m)
		mods[name] = m
	}
	return mods, nil
}

func (d *gpuDevice) loadModule(name string) (cuda.Module, error) {
	img, err := kernels.Fatbin(name)
	if err != nil {
		return 0, err
	}
	if img != nil {
		// A GPU the fatbin has no code for refuses it: the PTX serves.
		if m, err := d.drv.ModuleLoadFatbin(img); err == nil {
			return m, nil
		}
	}
	ptx, err := kernels.PTX(name)
	if err != nil {
		return 0, err
	}
	m, err := d.drv.ModuleLoadData(ptx)
	if err != nil {
		return 0, fmt.Errorf("loading %s.ptx: %w", name, err)
	}
	return m, nil
}

// loadKernels makes the kernel wrappers of the loaded modules.
func (d *gpuDevice) loadKernels(mods map[string]cuda.Module) error {
	var err error
	for i, suffix := range []string{"f64", "f32"} {
		if d.brute[i], err = loadBrute(d.drv, mods["haversine"], suffix); err != nil {
			return err
		}
		if d.seed[i], err = loadSeed(d.drv, mods["seed"], suffix); err != nil {
			return err
		}
	}
	if d.grid, err = loadGrid(d.drv, mods["grid"]); err != nil {
		return err
	}
	if d.resident, err = loadResident(d.drv, mods["resident"]); err != nil {
		return err
	}
	if d.knn, err = loadKNN(d.drv, mods["knn"]); err != nil {
		return err
	}
	if d.generate, err = loadGenerate(d.drv, mods["generate"]); err != nil {
		return err
	}
	if d.tree, err = loadTree(d.drv, mods["tree"]); err != nil {
		return err
	}
	if d.cells, err = loadCells(d.drv, mods["cells"]); err != nil {
		return err
	}
	if d.valid, err = loadValid(d.drv, mods["valid"]); err != nil {
		return err
	}
	d.move, err = loadMove(d.drv, mods["move"])
	return err
}

func (d *gpuDevice) close() error {
	var errs []error
	for _, s := range d.slots {
		if s != nil {
			errs = append(errs, s.free(d.drv))
		}
	}
	errs = append(errs, d.refs.free(d.drv))
	for _, e := range []cuda.Event{d.evIdx0, d.evIdx1, d.evClock} {
		if e != 0 {
			errs = append(errs, d.drv.EventDestroy(e))
		}
	}
	for _, m := range d.mods {
		errs = append(errs, d.drv.ModuleUnload(m))
	}
	errs = append(errs, d.drv.PrimaryCtxRelease(d.dev))
	d.ctx = 0
	return errors.Join(errs...)
}

// Bytes of device memory per observation in one slot: input columns,
// answers, the flagged list, and either the partials of one slice (brute
// force; slices beyond the first use the spare room small jobs leave) or the
// grid's sorted records and sort keys (the records are made from the
// columns as they are sorted).
func bytesPerObs(is32 bool) int {
	in := 16
	if is32 {
		in = 8
	}
	return in + 8 + 4 + max(12, kernels.ObsRecBytes+sortKeyBytes)
}

// maxJob is the largest job (observations) whose slots fit in 40% of the
// device's free memory, capped so that pinned host staging stays moderate.
// A grid job is also capped so that its answers (8 bytes an observation,
// written in cell order, i.e. scattered) fit in 3/4 of the L2 cache, where
// the scattered writes merge into whole sectors before they reach DRAM:
// on an H100 (50 MB of L2) 2^22 observations a job ran the 2^27 x 2^16
// query in 26.4 ms of kernels against 30.0 ms with 2^23.
func (d *gpuDevice) maxJob(is32 bool, nref int, grid bool) int {
	var free uint64
	err := d.onThread(func() error {
		var err error
		free, _, err = d.drv.MemGetInfo()
		return err
	})
	if err != nil || free == 0 {
		return 1 << 20
	}
	budget := int(free*4/10) - nref*40
	job := budget / (slotsPerGPU * bytesPerObs(is32))
	// 2^23 observations keep a 1-GPU 2^27 query at 16 jobs, so the first
	// copy-in and last copy-out that no kernel hides stay small, and the
	// pinned staging (3 slots x 24 bytes an observation) at 600 MB.
	job = min(job, 1<<23)
	if grid && d.info.L2Bytes > 0 {
		fit := 1 << 16
		for fit*2*8 <= d.info.L2Bytes*3/4 {
			fit *= 2
		}
		job = min(job, fit)
	}
	return max(job, 1<<16)
}

// minPartials is the partial-buffer room (observation x slice entries) that
// lets a small job split the references into enough slices to fill the GPU.
func (d *gpuDevice) minPartials() int {
	return d.targetBlocks() * kernels.BlockMinThreads * kernels.BlockMinObs
}

// targetBlocks is how many block_min blocks fill the device: three resident
// per multiprocessor (73 registers x 256 threads), two waves.
func (d *gpuDevice) targetBlocks() int { return d.info.Multiprocessors * 6 }

// slices picks how many reference slices a job of m observations uses: one
// when its observation blocks alone fill the GPU, more when they do not,
// limited by the partial buffer and by one tile per slice.
func (d *gpuDevice) slices(m, nref, partials int) (slices, sliceLen int) {
	perBlock := kernels.BlockMinThreads * kernels.BlockMinObs
	obsBlocks := (m + perBlock - 1) / perBlock
	slices = max(1, (d.targetBlocks()+obsBlocks-1)/obsBlocks)
	slices = min(slices, max(1, partials/max(m, 1)), (nref+kernels.BlockMinTile-1)/kernels.BlockMinTile)
	sliceLen = (nref + slices - 1) / slices
	sliceLen = (sliceLen + kernels.BlockMinTile - 1) / kernels.BlockMinTile * kernels.BlockMinTile
	slices = (nref + sliceLen - 1) / sliceLen
	return slices, sliceLen
}
