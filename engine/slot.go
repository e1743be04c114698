package engine

import (
	"errors"
	"fmt"
	"runtime"
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
	ref32, ref64, lat, lon  buffer
	cellStart, sorted, runs buffer // the grid index
}

func (r *deviceRefs) uploadGrid(drv *cuda.Driver, ix *gridIndex, managed bool, dev cuda.Device) error {
	for _, b := range []struct {
		buf *buffer
		src unsafe.Pointer
		n   int
	}{
		{&r.cellStart, unsafe.Pointer(&ix.start[0]), 4 * len(ix.start)},
		{&r.sorted, unsafe.Pointer(&ix.xyzw[0]), 4 * len(ix.xyzw)},
		{&r.runs, unsafe.Pointer(&ix.runs[0]), 2 * len(ix.runs)},
	} {
		if err := b.buf.ensure(drv, b.n, false, dev); err != nil {
			return err
		}
		var pin runtime.Pinner
		pin.Pin(b.src)
		err := drv.MemcpyHtoD(b.buf.ptr, b.src, uint64(b.n))
		pin.Unpin()
		if err != nil {
			return err
		}
	}
	return nil
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
			return pinned(lon32, func(p unsafe.Pointer) error { return put(&r.lon, p, 4*len(lon32)) })
		}
		if err := pinned(lat, func(p unsafe.Pointer) error { return put(&r.lat, p, 8*len(lat)) }); err != nil {
			return err
		}
		return pinned(lon, func(p unsafe.Pointer) error { return put(&r.lon, p, 8*len(lon)) })
	}
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
	return errors.Join(r.ref32.free(drv), r.ref64.free(drv), r.lat.free(drv), r.lon.free(drv),
		r.cellStart.free(drv), r.sorted.free(drv), r.runs.free(drv))
}

// slotConfig is what a slot's buffers are sized for.
type slotConfig struct {
	batch    int // observations per job
	partials int // (observation, slice) entries of partial results
	is32     bool
	managed  bool
	seed     bool
	dev      cuda.Device
}

// slot is one job in flight on a GPU: its stream, events, device buffers and
// pinned staging.
type slot struct {
	stream cuda.Stream
	evStop cuda.Event // after the job's last kernel

	cfg                        slotConfig
	lat, lon, outIdx, outDist  buffer // managed in ManagedMemory mode
	partD1, partD2, partIdx    buffer
	flagged, nflag             buffer
	hostIn, hostOut, hostNFlag pinnedHost

	job *partition.Job
}

func newSlot(drv *cuda.Driver) (*slot, error) {
	s := &slot{}
	var err error
	if s.stream, err = drv.StreamCreate(cuda.StreamNonBlocking); err != nil {
		return nil, err
	}
	if s.evStop, err = drv.EventCreate(cuda.EventDefault); err != nil {
		return nil, err
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
	for _, b := range []struct {
		buf     *buffer
		bytes   int
		managed bool
	}{
		{&s.lat, cfg.batch * elem, cfg.managed},
		{&s.lon, cfg.batch * elem, cfg.managed},
		{&s.outIdx, cfg.batch * 4, cfg.managed},
		{&s.outDist, cfg.batch * 4, cfg.managed},
		{&s.partD1, cfg.partials * 4, false},
		{&s.partD2, cfg.partials * 4, false},
		{&s.partIdx, cfg.partials * 4, false},
		{&s.flagged, cfg.batch * 4, false},
		{&s.nflag, 4, false},
	} {
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

func (s *slot) free(drv *cuda.Driver) error {
	errs := []error{}
	for _, b := range []*buffer{&s.lat, &s.lon, &s.outIdx, &s.outDist, &s.partD1, &s.partD2, &s.partIdx, &s.flagged, &s.nflag} {
		errs = append(errs, b.free(drv))
	}
	for _, h := range []*pinnedHost{&s.hostIn, &s.hostOut, &s.hostNFlag} {
		errs = append(errs, h.free(drv))
	}
	errs = append(errs, drv.EventDestroy(s.evStop), drv.StreamDestroy(s.stream))
	return errors.Join(errs...)
}

// start copies a job's observations in and enqueues its kernels and the copy
// of its answers back; finish completes it.
func (s *slot) start(d *gpuDevice, run *gpuRun, job partition.Job, first bool) error {
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
		if err := drv.MemcpyHtoDAsync(s.lat.ptr, s.hostIn.p, uint64(m*elem), stream); err != nil {
			return err
		}
		if err := drv.MemcpyHtoDAsync(s.lon.ptr, unsafe.Add(s.hostIn.p, m*elem), uint64(m*elem), stream); err != nil {
			return err
		}
	}
	prec := 0
	if s.cfg.is32 {
		prec = 1
	}
	if first {
		if err := drv.EventRecord(d.evFirst, stream); err != nil {
			return err
		}
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
		if run.grid != nil {
			// The partial buffers, idle in a grid query, hold the sort's
			// scratch (each has room for max(batch, g*g) entries).
			err = d.grid[prec].run(drv, stream, l, gridLaunch{
				cellStart: d.refs.cellStart.ptr, sorted: d.refs.sorted.ptr, runs: d.refs.runs.ptr,
				g: run.grid.g, h: run.grid.h32,
				keys: s.partD1.ptr, hist: s.partD2.ptr, perm: s.partIdx.ptr,
			})
			if err == nil {
				err = d.brute[prec].launchRefine(drv, stream, l)
			}
		} else {
			l.slices, l.sliceLen = d.slices(m, run.refs.n, s.cfg.partials)
			err = d.brute[prec].run(drv, stream, l)
		}
		if err != nil {
			return err
		}
		if err := drv.MemcpyDtoHAsync(s.hostNFlag.p, s.nflag.ptr, 4, stream); err != nil {
			return err
		}
	}
	if err := drv.EventRecord(s.evStop, stream); err != nil {
		return err
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
	s.job = &job
	return nil
}

// finish waits for the slot's job and writes its answers into the result.
func (s *slot) finish(drv *cuda.Driver, run *gpuRun) (refined int, err error) {
	job := *s.job
	s.job = nil
	if err := drv.StreamSynchronize(s.stream); err != nil {
		return 0, err
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
		refined = int(*(*uint32)(s.hostNFlag.p))
	}
	run.progress(m)
	return refined, nil
}

// parallelFor splits [0, n) over the cores for memory-bound loops.
func parallelFor(n int, fn func(lo, hi int)) {
	parallel.Blocks(n, 1<<18, 0, func(_, lo, hi int) { fn(lo, hi) })
}

func parallelCopy[T any](dst, src []T) {
	parallelFor(len(src), func(lo, hi int) { copy(dst[lo:hi], src[lo:hi]) })
}
