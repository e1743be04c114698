package engine

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/internal/parallel"
	"github.com/geoknn/geoknn/kernels"
	"github.com/geoknn/geoknn/partition"
)

// buffer is a device or managed allocation that grows on demand and is
// reused across jobs and calls.
type buffer struct {
	ptr     cuda.DevicePtr
	bytes   int
	managed bool
}

func (b *buffer) ensure(drv *cuda.Driver, bytes int, managed bool, dev cuda.Device) error {
	if b.ptr != 0 && b.bytes >= bytes && b.managed == managed {
		return nil
	}
	if err := b.free(drv); err != nil {
		return err
	}
	bytes = max(bytes, 256)
	var err error
	if managed {
		// Never ask for more managed memory than the GPU has free: over-
		// subscribing managed memory can stall the whole device.
		free, _, ferr := drv.MemGetInfo()
		if ferr != nil {
			return ferr
		}
		if uint64(bytes) > free/10*9 {
			return fmt.Errorf("%d MiB of managed memory asked for, %d MiB free on the GPU: use a smaller --batch-size",
				bytes>>20, free>>20)
		}
		if b.ptr, err = drv.MemAllocManaged(uint64(bytes), true); err != nil {
			return err
		}
		if err = drv.MemAdvise(b.ptr, uint64(bytes), cuda.AdviseSetPreferredLocation, dev); err != nil {
			return err
		}
	} else if b.ptr, err = drv.MemAlloc(uint64(bytes)); err != nil {
		return err
	}
	b.bytes, b.managed = bytes, managed
	return nil
}

func (b *buffer) free(drv *cuda.Driver) error {
	if b.ptr == 0 {
		return nil
	}
	err := drv.MemFree(b.ptr)
	b.ptr, b.bytes = 0, 0
	return err
}

// hostView is the host-side mapping of a managed buffer as a []T.
func hostView[T any](b *buffer, n int) []T {
	return unsafe.Slice((*T)(devicePtrToPointer(b.ptr)), n)
}

// devicePtrToPointer turns a managed (or pinned host) address, which is
// valid host memory not owned by Go, into a pointer.
func devicePtrToPointer(p cuda.DevicePtr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}

// pinnedHost is page-locked host memory for asynchronous copies.
type pinnedHost struct {
	p     unsafe.Pointer
	bytes int
}

func (h *pinnedHost) ensure(drv *cuda.Driver, bytes int) error {
	if h.p != nil && h.bytes >= bytes {
		return nil
	}
	if err := h.free(drv); err != nil {
		return err
	}
	p, err := drv.MemAllocHost(uint64(bytes))
	if err != nil {
		return err
	}
	h.p, h.bytes = p, bytes
	return nil
}

func (h *pinnedHost) free(drv *cuda.Driver) error {
	if h.p == nil {
		return nil
	}
	err := drv.MemFreeHost(h.p)
	h.p, h.bytes = nil, 0
	return err
}

func view[T any](p unsafe.Pointer, offsetElems, n int) []T {
	var zero T
	return unsafe.Slice((*T)(unsafe.Add(p, uintptr(offsetElems)*unsafe.Sizeof(zero))), n)
}

// deviceRefs holds the references on one GPU: float32 and float64 unit
// vectors for the exact kernels, radian columns for the seed port.
type deviceRefs struct {
	ref32, ref64, lat, lon buffer
	// The grid index: cell starts, references sorted by cell, the sphere's
	// z-runs a column (for side runsSide), and the sort's scratch.
	cellStart, sorted, runs, trimmed buffer
	keys, sums                       buffer
	runsSide                         int
	runsPtr                          cuda.DevicePtr // the buffer runsSide was uploaded to
}

// buildGrid builds the grid index of the uploaded references on the device,
// on stream: keys, histogram, scan, scatter. The runs table depends only on
// the grid side and is uploaded when the side changes.
func (r *deviceRefs) buildGrid(drv *cuda.Driver, k *gridKernels, stream cuda.Stream, shape gridShape, nref int) error {
	cells, sums := shape.cells(), shape.scanSums()
	if r.runsSide != shape.g {
		r.runsSide = 0 // until the table of this side is on the device
	}
	for _, b := range []struct {
		buf   *buffer
		bytes int
	}{
		{&r.cellStart, 4 * cells}, {&r.sums, 4 * sums},
		{&r.keys, sortKeyBytes * nref}, {&r.sorted, 16 * nref}, {&r.runs, 8 * shape.g * shape.g},
		{&r.trimmed, 8 * shape.g * shape.g},
	} {
		if err := b.buf.ensure(drv, b.bytes, false, 0); err != nil {
			return fmt.Errorf("allocating the grid index (%d MiB): %w", b.bytes>>20, err)
		}
	}
	if r.runsSide != shape.g || r.runs.ptr != r.runsPtr {
		runs := sphereRunsTable(shape.g)
		if err := pinned(runs, func(p unsafe.Pointer) error { return drv.MemcpyHtoD(r.runs.ptr, p, uint64(2*len(runs))) }); err != nil {
			return err
		}
		// A copy from pageable memory may return before the data reaches
		// the device, and the kernels run on non-blocking streams that do
		// not wait for it: finish it here (only when the side changes).
		if err := drv.Synchronize(); err != nil {
			return err
		}
		r.runsSide, r.runsPtr = shape.g, r.runs.ptr
	}
	return k.buildIndex(drv, stream, shape, r.ref32.ptr, nref,
		sortBufs{keys: r.keys.ptr, hist: r.cellStart.ptr, sums: r.sums.ptr}, r.sorted.ptr, r.runs.ptr, r.trimmed.ptr)
}

func (r *deviceRefs) upload(drv *cuda.Driver, refs *refSet, ref Points, seed, obs32 bool, managed bool, dev cuda.Device) error {
	put := func(b *buffer, src unsafe.Pointer, bytes int) error {
		if err := b.ensure(drv, bytes, managed, dev); err != nil {
			return err
		}
		if !managed {
			return drv.MemcpyHtoD(b.ptr, src, uint64(bytes))
		}
		copy(hostView[byte](b, bytes), unsafe.Slice((*byte)(src), bytes))
		if err := drv.MemAdvise(b.ptr, uint64(bytes), cuda.AdviseSetReadMostly, dev); err != nil {
			return err
		}
		return drv.MemPrefetch(b.ptr, uint64(bytes), dev, 0)
	}
	if err := pinned(refs.xyzw, func(p unsafe.Pointer) error { return put(&r.ref32, p, 4*len(refs.xyzw)) }); err != nil {
		return err
	}
	if err := pinned(refs.xyz64, func(p unsafe.Pointer) error { return put(&r.ref64, p, 8*len(refs.xyz64)) }); err != nil {
		return err
	}
	if seed {
		// The seed port reads the original references in the observations'
		// precision.
		lat, lon := make([]float64, ref.Len()), make([]float64, ref.Len())
		for i := range lat {
			lat[i], lon[i] = ref.At(i)
		}
		if obs32 {
			lat32, lon32 := toFloat32(lat), toFloat32(lon)
			if err := pinned(lat32, func(p unsafe.Pointer) error { return put(&r.lat, p, 4*len(lat32)) }); err != nil {
				return err
			}
			if err := pinned(lon32, func(p unsafe.Pointer) error { return put(&r.lon, p, 4*len(lon32)) }); err != nil {
				return err
			}
		} else {
			if err := pinned(lat, func(p unsafe.Pointer) error { return put(&r.lat, p, 8*len(lat)) }); err != nil {
				return err
			}
			if err := pinned(lon, func(p unsafe.Pointer) error { return put(&r.lon, p, 8*len(lon)) }); err != nil {
				return err
			}
		}
	}
	// Copies from pageable memory may return before the data reaches the
	// device; the kernels run on non-blocking streams that do not wait.
	return drv.Synchronize()
}

func toFloat32(s []float64) []float32 {
	out := make([]float32, len(s))
	for i, v := range s {
		out[i] = float32(v)
	}
	return out
}

func (r *deviceRefs) free(drv *cuda.Driver) error {
	r.runsSide = 0
	return errors.Join(r.ref32.free(drv), r.ref64.free(drv), r.lat.free(drv), r.lon.free(drv),
		r.cellStart.free(drv), r.sorted.free(drv), r.runs.free(drv),
		r.keys.free(drv), r.sums.free(drv), r.trimmed.free(drv))
}

// slotConfig is what a slot's buffers are sized for.
type slotConfig struct {
	batch    int // observations per job
	partials int // (observation, slice) entries of partial results
	is32     bool
	managed  bool
	seed     bool
	grid     gridShape // g > 0: grid scratch for this shape
	dev      cuda.Device
}

// slot is one job in flight on a GPU: its stream, events, device buffers and
// pinned staging.
type slot struct {
	stream cuda.Stream
	// Events around the job's copy in, kernels and copy out, for the
	// per-stage times in Stats.
	evIn, evCopied, evKernel, evStop, evOut cuda.Event

	cfg                        slotConfig
	lat, lon, outIdx, outDist  buffer // managed in ManagedMemory mode
	partD1, partD2, partIdx    buffer
	flagged, nflag             buffer
	recs, sortedRecs           buffer // grid: observation records, unsorted and sorted by cell
	keys, hist, sums           buffer // grid: the observation sort's scratch
	hostIn, hostOut, hostNFlag pinnedHost

	job *partition.Job
}

func newSlot(drv *cuda.Driver) (*slot, error) {
	s := &slot{}
	var err error
	if s.stream, err = drv.StreamCreate(cuda.StreamNonBlocking); err != nil {
		return nil, err
	}
	for _, e := range []*cuda.Event{&s.evIn, &s.evCopied, &s.evKernel, &s.evStop, &s.evOut} {
		if *e, err = drv.EventCreate(cuda.EventDefault); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *slot) ensure(drv *cuda.Driver, cfg slotConfig) error {
	elem := 8
	if cfg.is32 {
		elem = 4
	}
	if cfg.seed {
		cfg.partials = max(cfg.partials, cfg.batch*kernels.SeedWidth)
	}
	s.cfg = cfg
	type alloc struct {
		buf     *buffer
		bytes   int
		managed bool
	}
	allocs := []alloc{
		{&s.lat, cfg.batch * elem, cfg.managed},
		{&s.lon, cfg.batch * elem, cfg.managed},
		{&s.outIdx, cfg.batch * 4, cfg.managed},
		{&s.outDist, cfg.batch * 4, cfg.managed},
		{&s.flagged, cfg.batch * 4, false},
		{&s.nflag, 4, false},
	}
	if cfg.grid.g > 0 {
		allocs = append(allocs,
			alloc{&s.recs, cfg.batch * kernels.ObsRecBytes, false},
			alloc{&s.sortedRecs, cfg.batch * kernels.ObsRecBytes, false},
			alloc{&s.keys, cfg.batch * sortKeyBytes, false},
			alloc{&s.hist, cfg.grid.cells() * 4, false},
			alloc{&s.sums, cfg.grid.scanSums() * 4, false})
	} else {
		allocs = append(allocs,
			alloc{&s.partD1, cfg.partials * 4, false},
			alloc{&s.partD2, cfg.partials * 4, false},
			alloc{&s.partIdx, cfg.partials * 4, false})
	}
	for _, b := range allocs {
		if err := b.buf.ensure(drv, b.bytes, b.managed, cfg.dev); err != nil {
			return fmt.Errorf("allocating %d MiB: %w", b.bytes>>20, err)
		}
	}
	if err := s.hostNFlag.ensure(drv, 4); err != nil {
		return err
	}
	if cfg.managed {
		return nil
	}
	if err := s.hostIn.ensure(drv, 2*cfg.batch*elem); err != nil {
		return fmt.Errorf("pinning %d MiB of host memory: %w", 2*cfg.batch*elem>>20, err)
	}
	if err := s.hostOut.ensure(drv, 8*cfg.batch); err != nil {
		return fmt.Errorf("pinning %d MiB of host memory: %w", 8*cfg.batch>>20, err)
	}
	return nil
}

// buffers lists every device buffer of the slot.
func (s *slot) buffers() []*buffer {
	return []*buffer{&s.lat, &s.lon, &s.outIdx, &s.outDist, &s.partD1, &s.partD2, &s.partIdx,
		&s.flagged, &s.nflag, &s.recs, &s.sortedRecs, &s.keys, &s.hist, &s.sums}
}

func (s *slot) free(drv *cuda.Driver) error {
	errs := []error{}
	for _, b := range s.buffers() {
		errs = append(errs, b.free(drv))
	}
	for _, h := range []*pinnedHost{&s.hostIn, &s.hostOut, &s.hostNFlag} {
		errs = append(errs, h.free(drv))
	}
	for _, e := range []cuda.Event{s.evIn, s.evCopied, s.evKernel, s.evStop, s.evOut} {
		if e != 0 {
			errs = append(errs, drv.EventDestroy(e))
		}
	}
	errs = append(errs, drv.StreamDestroy(s.stream))
	return errors.Join(errs...)
}

// start copies a job's observations in and enqueues its kernels and the copy
// of its answers back; finish completes it. The kernels wait for after (the
// previous job's last kernel, or the index build), so the two slots' copies
// overlap each other's kernels but kernels never overlap: each job's kernel
// time is then its own.
func (s *slot) start(d *gpuDevice, run *gpuRun, job partition.Job, after cuda.Event) error {
	drv, stream, m := d.drv, s.stream, job.Len()
	if m > s.cfg.batch {
		return fmt.Errorf("job of %d observations exceeds the slot's %d", m, s.cfg.batch)
	}
	obs := run.req.Obs.Slice(job.Start, job.End)
	elem := 8
	if s.cfg.is32 {
		elem = 4
	}
	if s.cfg.managed {
		// Bring the pages home in bulk before the host writes them, rather
		// than faulting them back one by one.
		for _, b := range []*buffer{&s.lat, &s.lon} {
			if err := drv.MemPrefetch(b.ptr, uint64(m*elem), cuda.CPUDevice, stream); err != nil {
				return err
			}
		}
		if err := drv.StreamSynchronize(stream); err != nil {
			return err
		}
		if err := drv.EventRecord(s.evIn, stream); err != nil {
			return err
		}
		if s.cfg.is32 {
			parallelCopy(hostView[float32](&s.lat, m), obs.Lat32)
			parallelCopy(hostView[float32](&s.lon, m), obs.Lon32)
		} else {
			parallelCopy(hostView[float64](&s.lat, m), obs.Lat64)
			parallelCopy(hostView[float64](&s.lon, m), obs.Lon64)
		}
		for _, b := range []struct {
			buf   *buffer
			bytes int
		}{{&s.lat, m * elem}, {&s.lon, m * elem}, {&s.outIdx, m * 4}, {&s.outDist, m * 4}} {
			if err := drv.MemPrefetch(b.buf.ptr, uint64(b.bytes), s.cfg.dev, stream); err != nil {
				return err
			}
		}
	} else {
		if s.cfg.is32 {
			parallelCopy(view[float32](s.hostIn.p, 0, m), obs.Lat32)
			parallelCopy(view[float32](s.hostIn.p, m, m), obs.Lon32)
		} else {
			parallelCopy(view[float64](s.hostIn.p, 0, m), obs.Lat64)
			parallelCopy(view[float64](s.hostIn.p, m, m), obs.Lon64)
		}
		if err := drv.EventRecord(s.evIn, stream); err != nil {
			return err
		}
		if err := drv.MemcpyHtoDAsync(s.lat.ptr, s.hostIn.p, uint64(m*elem), stream); err != nil {
			return err
		}
		if err := drv.MemcpyHtoDAsync(s.lon.ptr, unsafe.Add(s.hostIn.p, m*elem), uint64(m*elem), stream); err != nil {
			return err
		}
	}
	if err := drv.EventRecord(s.evCopied, stream); err != nil {
		return err
	}
	if after != 0 {
		if err := drv.StreamWaitEvent(stream, after); err != nil {
			return err
		}
	}
	if err := drv.EventRecord(s.evKernel, stream); err != nil {
		return err
	}
	prec := 0
	if s.cfg.is32 {
		prec = 1
	}
	if run.req.Algorithm == Seed {
		err := d.seed[prec].run(drv, stream, d.refs.lat.ptr, d.refs.lon.ptr, run.req.Ref.Len(),
			s.lat.ptr, s.lon.ptr, m, s.partIdx.ptr, s.partD1.ptr, s.outIdx.ptr, s.outDist.ptr)
		if err != nil {
			return err
		}
	} else {
		if err := drv.MemsetD32Async(s.nflag.ptr, 0, 1, stream); err != nil {
			return err
		}
		l := bruteLaunch{
			lat: s.lat.ptr, lon: s.lon.ptr, nobs: m,
			ref32: d.refs.ref32.ptr, ref64: d.refs.ref64.ptr, nref: run.refs.n,
			partD1: s.partD1.ptr, partD2: s.partD2.ptr, partIdx: s.partIdx.ptr,
			outIdx: s.outIdx.ptr, outDist: s.outDist.ptr,
			flagged: s.flagged.ptr, nflagged: s.nflag.ptr,
			refineBlocks: d.info.Multiprocessors * 8,
		}
		var err error
		if run.grid.g > 0 {
			err = d.grid.sortObs(drv, stream, prec, s.lat.ptr, s.lon.ptr, m, run.grid, s.recs.ptr,
				sortBufs{keys: s.keys.ptr, hist: s.hist.ptr, sums: s.sums.ptr}, s.sortedRecs.ptr, 0)
			if err == nil {
				err = d.grid.runQuery(drv, stream, gridQuery{
					obs: s.sortedRecs.ptr, nobs: m,
					cellStart: d.refs.cellStart.ptr, sorted: d.refs.sorted.ptr, runs: d.refs.trimmed.ptr,
					shape: run.grid, ref64: d.refs.ref64.ptr,
					outIdx: s.outIdx.ptr, outDist: s.outDist.ptr, refined: s.nflag.ptr,
				})
			}
		} else {
			l.slices, l.sliceLen = d.slices(m, run.refs.n, s.cfg.partials)
			err = d.brute[prec].run(drv, stream, l)
		}
		if err != nil {
			return err
		}
	}
	if err := drv.EventRecord(s.evStop, stream); err != nil {
		return err
	}
	if run.req.Algorithm != Seed {
		if err := drv.MemcpyDtoHAsync(s.hostNFlag.p, s.nflag.ptr, 4, stream); err != nil {
			return err
		}
	}
	if s.cfg.managed {
		for _, b := range []*buffer{&s.outIdx, &s.outDist} {
			if err := drv.MemPrefetch(b.ptr, uint64(m*4), cuda.CPUDevice, stream); err != nil {
				return err
			}
		}
	} else {
		if err := drv.MemcpyDtoHAsync(s.hostOut.p, s.outIdx.ptr, uint64(m*4), stream); err != nil {
			return err
		}
		if err := drv.MemcpyDtoHAsync(unsafe.Add(s.hostOut.p, m*4), s.outDist.ptr, uint64(m*4), stream); err != nil {
			return err
		}
	}
	if err := drv.EventRecord(s.evOut, stream); err != nil {
		return err
	}
	s.job = &job
	return nil
}

// stageTimes is device time by stage, summed over jobs.
type stageTimes struct {
	index, upload, kernel, download time.Duration
	refined                         int
}

// finish waits for the slot's job, writes its answers into the result and
// adds its stage times to t.
func (s *slot) finish(drv *cuda.Driver, run *gpuRun, t *stageTimes) error {
	job := *s.job
	s.job = nil
	if err := drv.StreamSynchronize(s.stream); err != nil {
		return err
	}
	for _, st := range []struct {
		from, to cuda.Event
		sum      *time.Duration
	}{{s.evIn, s.evCopied, &t.upload}, {s.evKernel, s.evStop, &t.kernel}, {s.evStop, s.evOut, &t.download}} {
		el, err := drv.EventElapsed(st.from, st.to)
		if err != nil {
			return err
		}
		*st.sum += el
	}
	m := job.Len()
	var idx []uint32
	var dist []float32
	if s.cfg.managed {
		idx, dist = hostView[uint32](&s.outIdx, m), hostView[float32](&s.outDist, m)
	} else {
		idx, dist = view[uint32](s.hostOut.p, 0, m), view[float32](s.hostOut.p, m, m)
	}
	outIdx, outDist := run.out.Index[job.Start:job.End], run.out.Distance[job.Start:job.End]
	parallelCopy(outDist, dist)
	if run.req.Algorithm != Seed && run.refs.dups {
		orig := run.refs.orig
		parallelFor(m, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				outIdx[i] = orig[idx[i]]
			}
		})
	} else {
		parallelCopy(outIdx, idx)
	}
	if run.req.Algorithm != Seed {
		t.refined += int(*(*uint32)(s.hostNFlag.p))
	}
	run.progress(m)
	return nil
}

// parallelFor splits [0, n) over the cores for memory-bound loops.
func parallelFor(n int, fn func(lo, hi int)) {
	parallel.Blocks(n, 1<<18, 0, func(_, lo, hi int) { fn(lo, hi) })
}

func parallelCopy[T any](dst, src []T) {
	parallelFor(len(src), func(lo, hi int) { copy(dst[lo:hi], src[lo:hi]) })
}
