package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sync/errgroup"

	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/kernels"
	"github.com/geoknn/geoknn/partition"
)

// MemoryMode selects where the GPU engine keeps each job's observations and
// answers.
type MemoryMode int

const (
	// DeviceMemory: plain device allocations, filled and drained by
	// asynchronous copies through pinned host buffers on two streams per GPU,
	// so one job's copies overlap the previous job's kernels.
	DeviceMemory MemoryMode = iota
	// ManagedMemory: the reference notebook's design: managed allocations the
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

// ErrNoGPU is returned by NewGPU when the driver loads but no usable GPU is
// present. errors.Is(err, cuda.ErrNoDriver) tells the no-driver case.
var ErrNoGPU = errors.New("no CUDA GPU found")

// GPUOptions configures NewGPU.
type GPUOptions struct {
	// Devices is the number of GPUs to use, 0 for all.
	Devices int
	Memory  MemoryMode
}

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

// GPU is the exact engine on NVIDIA GPUs. One goroutine per GPU, locked to
// its OS thread with the GPU's primary context current, pulls jobs from its
// own queue and steals from the others' when it runs dry. Modules and
// buffers are kept between calls; Close releases them.
type GPU struct {
	mu     sync.Mutex
	drv    *cuda.Driver
	memory MemoryMode
	devs   []*gpuDevice
}

// NewGPU loads the CUDA driver, retains the primary context of each GPU and
// loads the kernels. Without a driver the error wraps cuda.ErrNoDriver;
// without a GPU it wraps ErrNoGPU.
func NewGPU(opts GPUOptions) (*GPU, error) {
	drv, err := cuda.Load()
	if err != nil {
		return nil, err
	}
	n, err := drv.DeviceCount()
	if err != nil {
		return nil, fmt.Errorf("gpu engine: %w", err)
	}
	if n == 0 {
		return nil, ErrNoGPU
	}
	if opts.Devices < 0 || opts.Devices > n {
		return nil, fmt.Errorf("gpu engine: %d GPUs asked for, %d present", opts.Devices, n)
	}
	if opts.Devices > 0 {
		n = opts.Devices
	}
	g := &GPU{drv: drv, memory: opts.Memory, devs: make([]*gpuDevice, n)}
	for i := range g.devs {
		d := &gpuDevice{drv: drv}
		g.devs[i] = d
		if err := d.onThread(func() error { return d.open(i, opts.Memory) }); err != nil {
			g.Close()
			return nil, fmt.Errorf("gpu engine: GPU %d: %w", i, err)
		}
	}
	return g, nil
}

// Devices describes the GPUs in use.
func (g *GPU) Devices() []DeviceInfo {
	infos := make([]DeviceInfo, len(g.devs))
	for i, d := range g.devs {
		infos[i] = d.info
	}
	return infos
}

// Close frees every buffer and releases the contexts.
func (g *GPU) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	var errs []error
	for _, d := range g.devs {
		if d != nil && d.ctx != 0 {
			errs = append(errs, d.onThread(d.close))
		}
	}
	g.devs = nil
	return errors.Join(errs...)
}

// Nearest answers req into out on every GPU of the engine.
func (g *GPU) Nearest(ctx context.Context, req Request, out Result) (Stats, error) {
	start := time.Now()
	if err := checkRequest(req, out); err != nil {
		return Stats{}, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.devs) == 0 {
		return Stats{}, errors.New("gpu engine: closed")
	}
	refs := prepareRefs(req.Ref)
	var note string
	var grid gridShape
	if req.Algorithm == Grid {
		plan := planGrid(req.Obs, refs, gpuGridCost, req.GridSide)
		if plan.index == nil {
			req.Algorithm = Brute
			note = "grid fell back to brute force: " + plan.reason
		} else {
			grid = newGridShape(plan.index.g)
			note = plan.note()
		}
	}
	n := req.Obs.Len()
	batch := req.BatchSize
	if batch == 0 {
		maxJob := g.devs[0].maxJob(req.Obs.Is32(), refs.n, grid.g > 0)
		for _, d := range g.devs[1:] {
			maxJob = min(maxJob, d.maxJob(req.Obs.Is32(), refs.n, grid.g > 0))
		}
		batch = partition.BatchSize(n, len(g.devs), 8, 1<<20, maxJob, kernels.BlockMinThreads*kernels.BlockMinObs)
	}
	jobs, err := partition.Split(n, batch)
	if err != nil {
		return Stats{}, err
	}
	queue := partition.NewQueue(jobs, len(g.devs))
	run := &gpuRun{req: req, out: out, refs: refs, grid: grid, queue: queue, n: n}
	eg, ectx := errgroup.WithContext(ctx)
	times := make([]stageTimes, len(g.devs))
	for w, d := range g.devs {
		eg.Go(func() error {
			return d.onThread(func() error {
				err := d.work(ectx, w, run, batch, &times[w])
				if err != nil {
					return fmt.Errorf("GPU %d (%s): %w", d.info.Ordinal, d.info.Name, err)
				}
				return nil
			})
		})
	}
	if err := eg.Wait(); err != nil {
		return Stats{}, fmt.Errorf("gpu engine: %w", err)
	}
	st := Stats{Engine: "gpu", Jobs: len(jobs), Wall: time.Since(start), Note: note}
	for w, d := range g.devs {
		st.Devices = append(st.Devices, d.info.String())
		st.addDevice(times[w])
	}
	return st, nil
}

// gpuRun is one query's shared state across the device workers.
type gpuRun struct {
	req   Request
	out   Result
	refs  *refSet
	grid  gridShape // the cells when the query runs the grid algorithm (g > 0)
	queue *partition.Queue
	n     int

	mu   sync.Mutex
	done int
}

func (r *gpuRun) progress(k int) {
	if r.req.Progress == nil {
		return
	}
	r.mu.Lock()
	r.done += k
	r.req.Progress(r.done, r.n)
	r.mu.Unlock()
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
	mods     []cuda.Module

	refs           deviceRefs
	slots          [2]*slot
	evIdx0, evIdx1 cuda.Event // around the index build
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

func (d *gpuDevice) open(ordinal int, memory MemoryMode) error {
	var err error
	if d.info, err = describe(d.drv, ordinal); err != nil {
		return err
	}
	if d.info.ComputeCapability[0] < 8 {
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
	if memory == ManagedMemory {
		ok, err := d.drv.DeviceAttribute(d.dev, cuda.ConcurrentManagedAccess)
		if err != nil {
			return err
		}
		if ok == 0 {
			return fmt.Errorf("%s does not support concurrent managed access; use device memory", d.info.Name)
		}
	}
	d.memory = memory
	mods := map[string]cuda.Module{}
	for _, name := range []string{"haversine", "seed", "grid", "resident"} {
		ptx, err := kernels.PTX(name)
		if err != nil {
			return err
		}
		m, err := d.drv.ModuleLoadData(ptx)
		if err != nil {
			return fmt.Errorf("loading %s.ptx: %w", name, err)
		}
		d.mods = append(d.mods, m)
		mods[name] = m
	}
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
	for _, e := range []*cuda.Event{&d.evIdx0, &d.evIdx1} {
		if *e, err = d.drv.EventCreate(cuda.EventDefault); err != nil {
			return err
		}
	}
	for i := range d.slots {
		s, err := newSlot(d.drv)
		if err != nil {
			return err
		}
		d.slots[i] = s
	}
	return nil
}

func (d *gpuDevice) close() error {
	var errs []error
	for _, s := range d.slots {
		if s != nil {
			errs = append(errs, s.free(d.drv))
		}
	}
	errs = append(errs, d.refs.free(d.drv))
	for _, e := range []cuda.Event{d.evIdx0, d.evIdx1} {
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
// grid's records (unsorted and sorted) and sort keys.
func bytesPerObs(is32 bool) int {
	in := 16
	if is32 {
		in = 8
	}
	return in + 8 + 4 + max(12, 2*kernels.ObsRecBytes+sortKeyBytes)
}

// maxJob is the largest job (observations) whose two slots fit in 40% of the
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
	job := budget / (2 * bytesPerObs(is32))
	// 2^23 observations keep a 1-GPU 2^27 query at 16 jobs, so the first
	// copy-in and last copy-out that no kernel hides stay small, and the
	// pinned staging (2 slots x 24 bytes an observation) at 400 MB.
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

// work runs jobs from the queue on this device until none is left, with two
// slots in flight: while one slot's kernels run, the other's answers are
// copied out and its next inputs copied in. It adds the device's stage times
// to t.
func (d *gpuDevice) work(ctx context.Context, w int, run *gpuRun, batch int, t *stageTimes) (err error) {
	is32 := run.req.Obs.Is32()
	if err := d.refs.upload(d.drv, run.refs, run.req.Ref, run.req.Algorithm == Seed, is32, d.memory == ManagedMemory, d.dev); err != nil {
		return fmt.Errorf("uploading references: %w", err)
	}
	defer func() {
		// Leave no work in flight on any return path: a failed start or
		// index build may have queued copies and kernels on a slot's
		// stream before it returned.
		for _, s := range d.slots {
			d.drv.StreamSynchronize(s.stream)
			s.job = nil
		}
	}()
	// after is what the next job's kernels wait for: the index build, then
	// each job's last kernel.
	var after cuda.Event
	if run.grid.g > 0 {
		stream := d.slots[0].stream
		if err := d.drv.EventRecord(d.evIdx0, stream); err != nil {
			return err
		}
		if err := d.refs.buildGrid(d.drv, d.grid, stream, run.grid, run.refs.n); err != nil {
			return fmt.Errorf("building the grid index: %w", err)
		}
		if err := d.drv.EventRecord(d.evIdx1, stream); err != nil {
			return err
		}
		after = d.evIdx1
	}
	cfg := slotConfig{batch: batch, is32: is32, managed: d.memory == ManagedMemory, dev: d.dev,
		partials: max(batch, d.minPartials()), seed: run.req.Algorithm == Seed, grid: run.grid}
	for _, s := range d.slots {
		if err := s.ensure(d.drv, cfg); err != nil {
			return err
		}
	}
	for k := 0; ; k++ {
		job, _, ok := run.queue.Next(w)
		if !ok {
			break
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		s := d.slots[k%2]
		if s.job != nil {
			if err := s.finish(d.drv, run, t); err != nil {
				return err
			}
		}
		if err := s.start(d, run, job, after); err != nil {
			return fmt.Errorf("job [%d, %d): %w", job.Start, job.End, err)
		}
		after = s.evStop
	}
	for _, s := range d.slots {
		if s.job != nil {
			if err := s.finish(d.drv, run, t); err != nil {
				return err
			}
		}
	}
	if run.grid.g > 0 {
		if err := d.drv.StreamSynchronize(d.slots[0].stream); err != nil {
			return err
		}
		idx, err := d.drv.EventElapsed(d.evIdx0, d.evIdx1)
		if err != nil {
			return err
		}
		t.index += idx
		t.kernel += idx
	}
	return nil
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
