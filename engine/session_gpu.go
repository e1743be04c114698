package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
	"unsafe"

	"golang.org/x/sync/errgroup"

	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/internal/parallel"
	"github.com/geoknn/geoknn/kernels"
)

// NewSession places obs on the engine's GPUs, split into one contiguous
// range a GPU, for repeated queries (see Session). Each GPU keeps its
// range's radian columns and, for the grid algorithm, their unit-vector
// records and the copy sorted by cell, plus the answers of the last query;
// the observations must fit in 80% of each GPU's free memory.
func (g *GPU) NewSession(obs Points, opts SessionOptions) (Session, error) {
	if err := checkSessionOptions(opts); err != nil {
		return nil, err
	}
	if err := obs.Check("observations"); err != nil {
		return nil, err
	}
	n := obs.Len()
	if n == 0 || n > 1<<31-1 {
		return nil, fmt.Errorf("session: %d observations (want 1 to %d)", n, 1<<31-1)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.devs) == 0 {
		return nil, errors.New("gpu engine: closed")
	}
	replan := opts.Replan
	if replan == 0 {
		replan = 16
	}
	s := &gpuSession{g: g, opts: opts, n: n, is32: obs.Is32(), sample: newObsSample(obs),
		plan: sessionPlan{replan: replan}}
	per := (n + len(g.devs) - 1) / len(g.devs)
	for k, d := range g.devs {
		lo, hi := min(k*per, n), min((k+1)*per, n)
		if lo == hi {
			continue
		}
		p := &residentPart{d: d, lo: lo, hi: hi}
		s.parts = append(s.parts, p)
		if err := d.onThread(func() error { return p.open(s, obs.Slice(lo, hi)) }); err != nil {
			s.closeLocked()
			return nil, fmt.Errorf("session: GPU %d (%s): %w", d.info.Ordinal, d.info.Name, err)
		}
	}
	return s, nil
}

type gpuSession struct {
	g        *GPU
	opts     SessionOptions
	n        int
	is32     bool
	parts    []*residentPart
	sample   *obsSample
	plan     sessionPlan
	refs     refSet // reused every query
	replaced int
	closed   bool
}

// residentPart is one GPU's range [lo, hi) of a session's observations.
// Its methods run on the device's thread (gpuDevice.onThread).
type residentPart struct {
	d      *gpuDevice
	lo, hi int

	stream                    cuda.Stream
	ev0, evIdx, evStop, evOut cuda.Event
	refs                      deviceRefs

	lat, lon, recs, sorted  buffer // columns; records unsorted and sorted by cell
	pos                     buffer // pos[i]: where record i is in sorted
	keys, hist, sums        buffer // the observation sort's scratch
	outIdx, outDist, prev   buffer
	flagged, nflag, count   buffer
	partD1, partD2, partIdx buffer // brute force
	orig                    buffer // distinct -> input reference index, when duplicates were merged
	repIdx, repLat, repLon  buffer // a replacement's staging on the device
	hostOut, hostSmall      pinnedHost
	hostRep, hostRefs       pinnedHost

	shape       gridShape // the cells of the query in flight (g == 0: brute force)
	sortedShape gridShape // the cells recs were last sorted by (g == 0: not sorted)
	repQueued   bool      // a replacement's copies may still be reading hostRep
	patched     int       // records replaced in place in sorted since the sort
}

func (p *residentPart) n() int { return p.hi - p.lo }

func (p *residentPart) buffers() []*buffer {
	return []*buffer{&p.lat, &p.lon, &p.recs, &p.sorted, &p.pos, &p.keys, &p.hist, &p.sums,
		&p.outIdx, &p.outDist, &p.prev, &p.flagged, &p.nflag, &p.count, &p.partD1, &p.partD2, &p.partIdx,
		&p.orig, &p.repIdx, &p.repLat, &p.repLon}
}

// open allocates the part's buffers and uploads its observations.
func (p *residentPart) open(s *gpuSession, obs Points) error {
	drv, m := p.d.drv, p.n()
	elem := 8
	if s.is32 {
		elem = 4
	}
	bytes := m * (2*elem + 4*3 + 4)
	if s.opts.Algorithm == Grid {
		bytes += m * (2*kernels.ObsRecBytes + sortKeyBytes + 4)
	}
	free, _, err := drv.MemGetInfo()
	if err != nil {
		return err
	}
	if uint64(bytes) > free/10*8 {
		return fmt.Errorf("%d observations need %d MiB, %d MiB free: use more GPUs or queries that stream (Nearest)",
			m, bytes>>20, free>>20)
	}
	if p.stream, err = drv.StreamCreate(cuda.StreamNonBlocking); err != nil {
		return err
	}
	for _, e := range []*cuda.Event{&p.ev0, &p.evIdx, &p.evStop, &p.evOut} {
		if *e, err = drv.EventCreate(cuda.EventDefault); err != nil {
			return err
		}
	}
	allocs := []struct {
		buf   *buffer
		bytes int
	}{
		{&p.lat, m * elem}, {&p.lon, m * elem}, {&p.outIdx, 4 * m}, {&p.outDist, 4 * m},
		{&p.prev, 4 * m}, {&p.flagged, 4 * m}, {&p.nflag, 4}, {&p.count, 8},
	}
	if s.opts.Algorithm == Grid {
		allocs = append(allocs, struct {
			buf   *buffer
			bytes int
		}{&p.recs, m * kernels.ObsRecBytes}, struct {
			buf   *buffer
			bytes int
		}{&p.sorted, m * kernels.ObsRecBytes}, struct {
			buf   *buffer
			bytes int
		}{&p.keys, sortKeyBytes * m}, struct {
			buf   *buffer
			bytes int
		}{&p.pos, 4 * m})
	}
	for _, a := range allocs {
		if err := a.buf.ensure(drv, a.bytes, false, 0); err != nil {
			return fmt.Errorf("allocating %d MiB: %w", a.bytes>>20, err)
		}
	}
	if err := p.hostSmall.ensure(drv, 16); err != nil {
		return err
	}
	up := func(b *buffer, col any) error {
		switch c := col.(type) {
		case []float64:
			return pinned(c, func(ptr unsafe.Pointer) error { return drv.MemcpyHtoD(b.ptr, ptr, uint64(8*len(c))) })
		case []float32:
			return pinned(c, func(ptr unsafe.Pointer) error { return drv.MemcpyHtoD(b.ptr, ptr, uint64(4*len(c))) })
		}
		return fmt.Errorf("unknown column type %T", col)
	}
	if s.is32 {
		err = errors.Join(up(&p.lat, obs.Lat32), up(&p.lon, obs.Lon32))
	} else {
		err = errors.Join(up(&p.lat, obs.Lat64), up(&p.lon, obs.Lon64))
	}
	if err != nil {
		return fmt.Errorf("uploading observations: %w", err)
	}
	// Copies from pageable memory may return before the data reaches the
	// device; the kernels below run on a non-blocking stream.
	if err := drv.Synchronize(); err != nil {
		return err
	}
	if err := drv.MemsetD32Async(p.prev.ptr, noAnswer, uint64(m), p.stream); err != nil {
		return err
	}
	if s.opts.Algorithm == Grid {
		if err := p.d.grid.prepObs(drv, p.stream, prec(s.is32), p.lat.ptr, p.lon.ptr, m, 0, gridShape{}, false,
			p.recs.ptr, sortBufs{}); err != nil {
			return err
		}
	}
	return drv.StreamSynchronize(p.stream)
}

func prec(is32 bool) int {
	if is32 {
		return 1
	}
	return 0
}

func (p *residentPart) close() error {
	drv := p.d.drv
	var errs []error
	if p.stream != 0 {
		errs = append(errs, drv.StreamSynchronize(p.stream))
	}
	for _, b := range p.buffers() {
		errs = append(errs, b.free(drv))
	}
	errs = append(errs, p.refs.free(drv))
	for _, h := range []*pinnedHost{&p.hostOut, &p.hostSmall, &p.hostRep, &p.hostRefs} {
		errs = append(errs, h.free(drv))
	}
	for _, e := range []cuda.Event{p.ev0, p.evIdx, p.evStop, p.evOut} {
		if e != 0 {
			errs = append(errs, drv.EventDestroy(e))
		}
	}
	if p.stream != 0 {
		errs = append(errs, drv.StreamDestroy(p.stream))
	}
	return errors.Join(errs...)
}

func (s *gpuSession) Len() int { return s.n }

func (s *gpuSession) Close() error {
	s.g.mu.Lock()
	defer s.g.mu.Unlock()
	return s.closeLocked()
}

func (s *gpuSession) closeLocked() error {
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	for _, p := range s.parts {
		errs = append(errs, p.d.onThread(p.close))
	}
	s.parts = nil
	return errors.Join(errs...)
}

func (s *gpuSession) Replace(ctx context.Context, idx []uint32, pts Points) error {
	if err := checkReplace(idx, pts, s.n); err != nil {
		return err
	}
	s.g.mu.Lock()
	defer s.g.mu.Unlock()
	if s.closed {
		return errors.New("session: closed")
	}
	eg, _ := errgroup.WithContext(ctx)
	for _, p := range s.parts {
		a, _ := slices.BinarySearch(idx, uint32(p.lo))
		b, _ := slices.BinarySearch(idx, uint32(p.hi))
		if a == b {
			continue
		}
		eg.Go(func() error {
			return p.d.onThread(func() error { return p.replace(s, idx[a:b], pts.Slice(a, b)) })
		})
	}
	if err := eg.Wait(); err != nil {
		return fmt.Errorf("session: replace: %w", err)
	}
	s.sample.replace(idx, pts)
	s.replaced += len(idx)
	return nil
}

// replace stages k new observations (global indices idx) in pinned memory,
// copies them over and runs the replace kernel.
func (p *residentPart) replace(s *gpuSession, idx []uint32, pts Points) error {
	drv, k := p.d.drv, len(idx)
	elem := 8
	if s.is32 {
		elem = 4
	}
	if p.repQueued {
		// An earlier replacement's copies may still read the staging.
		if err := drv.StreamSynchronize(p.stream); err != nil {
			return err
		}
		p.repQueued = false
	}
	idxBytes := (4*k + 7) &^ 7 // the columns start 8-byte aligned
	if err := p.hostRep.ensure(drv, idxBytes+2*elem*k); err != nil {
		return err
	}
	for _, b := range []struct {
		buf   *buffer
		bytes int
	}{{&p.repIdx, 4 * k}, {&p.repLat, elem * k}, {&p.repLon, elem * k}} {
		if err := b.buf.ensure(drv, b.bytes, false, 0); err != nil {
			return err
		}
	}
	local := view[uint32](p.hostRep.p, 0, k)
	cols := unsafe.Add(p.hostRep.p, idxBytes)
	parallel.Blocks(k, 1<<14, 0, func(_, lo, hi int) {
		for j := lo; j < hi; j++ {
			local[j] = idx[j] - uint32(p.lo)
		}
		if s.is32 {
			lat, lon := view[float32](cols, 0, k), view[float32](cols, k, k)
			for j := lo; j < hi; j++ {
				a, b := pts.At(j)
				lat[j], lon[j] = float32(a), float32(b)
			}
		} else {
			lat, lon := view[float64](cols, 0, k), view[float64](cols, k, k)
			for j := lo; j < hi; j++ {
				lat[j], lon[j] = pts.At(j)
			}
		}
	})
	for _, c := range []struct {
		dst cuda.DevicePtr
		src unsafe.Pointer
		n   int
	}{{p.repIdx.ptr, p.hostRep.p, 4 * k}, {p.repLat.ptr, cols, elem * k}, {p.repLon.ptr, unsafe.Add(cols, elem*k), elem * k}} {
		if err := drv.MemcpyHtoDAsync(c.dst, c.src, uint64(c.n), p.stream); err != nil {
			return err
		}
	}
	// Replaced records are patched into the sorted copy where the old ones
	// were: out of cell order, which costs the query a little speed until
	// the next sort (query re-sorts once an eighth is out of order).
	var sorted, pos cuda.DevicePtr
	if p.sortedShape.g > 0 {
		sorted, pos = p.sorted.ptr, p.pos.ptr
		p.patched += k
	}
	// Queued, not waited for: the next query on the stream runs after it,
	// and the staging is not touched again before the stream is
	// synchronized (the query's Wait, or the next replacement).
	p.repQueued = true
	return p.d.resident.runReplace(drv, p.stream, prec(s.is32), p.repIdx.ptr, p.repLat.ptr, p.repLon.ptr, k,
		p.lat.ptr, p.lon.ptr, p.recs.ptr, sorted, pos, p.prev.ptr)
}

func (s *gpuSession) Nearest(ctx context.Context, ref Points, out Result) (SessionStats, error) {
	q, err := s.Start(ctx, ref, out)
	if err != nil {
		return SessionStats{}, err
	}
	return q.Wait()
}

// Start prepares the references (host), then queues every GPU's part of the
// query and returns; Wait collects it. The engine stays locked in between.
func (s *gpuSession) Start(ctx context.Context, ref Points, out Result) (Pending, error) {
	start := time.Now()
	if err := ref.Check("references"); err != nil {
		return nil, err
	}
	if ref.Len() == 0 || ref.Len() > 1<<31-1 {
		return nil, fmt.Errorf("references: %d (want 1 to %d)", ref.Len(), 1<<31-1)
	}
	want := out.Index != nil || out.Distance != nil
	if want && (len(out.Index) != s.n || len(out.Distance) != s.n) {
		return nil, fmt.Errorf("session: result has room for %d indices and %d distances, want %d",
			len(out.Index), len(out.Distance), s.n)
	}
	s.g.mu.Lock()
	if s.closed {
		s.g.mu.Unlock()
		return nil, errors.New("session: closed")
	}
	refs := &s.refs
	refs.prepare(ref)
	s.plan.update(s.opts, s.sample, refs, gpuGridCost)
	q := &gpuPending{s: s, start: start, prepare: time.Since(start), out: out, want: want,
		times: make([]stageTimes, len(s.parts)), changed: make([]int, len(s.parts))}
	eg, _ := errgroup.WithContext(ctx)
	for k, p := range s.parts {
		eg.Go(func() error {
			return p.d.onThread(func() error {
				if err := p.enqueue(s, refs, want, &q.times[k]); err != nil {
					return fmt.Errorf("GPU %d (%s): %w", p.d.info.Ordinal, p.d.info.Name, err)
				}
				return nil
			})
		})
	}
	if err := eg.Wait(); err != nil {
		// Leave nothing in flight behind the error.
		for _, p := range s.parts {
			p.d.onThread(func() error { return p.d.drv.StreamSynchronize(p.stream) })
		}
		s.g.mu.Unlock()
		return nil, fmt.Errorf("session: %w", err)
	}
	return q, nil
}

// gpuPending is a started session query.
type gpuPending struct {
	s       *gpuSession
	start   time.Time
	prepare time.Duration
	out     Result
	want    bool
	times   []stageTimes
	changed []int
	done    bool
	stats   SessionStats
	err     error
}

func (q *gpuPending) Wait() (SessionStats, error) {
	if q.done {
		return q.stats, q.err
	}
	q.done = true
	s := q.s
	defer s.g.mu.Unlock()
	eg := errgroup.Group{}
	for k, p := range s.parts {
		eg.Go(func() error {
			return p.d.onThread(func() error {
				var err error
				q.changed[k], err = p.collect(q.out, q.want, &q.times[k])
				if err != nil {
					return fmt.Errorf("GPU %d (%s): %w", p.d.info.Ordinal, p.d.info.Name, err)
				}
				return nil
			})
		})
	}
	if q.err = eg.Wait(); q.err != nil {
		q.err = fmt.Errorf("session: %w", q.err)
		return SessionStats{}, q.err
	}
	st := SessionStats{Stats: Stats{Engine: "gpu", Jobs: len(s.parts), Note: s.plan.note}, Replaced: s.replaced,
		Prepare: q.prepare}
	for k, p := range s.parts {
		st.Devices = append(st.Devices, p.d.info.String())
		st.addDevice(q.times[k])
		st.Changed += q.changed[k]
	}
	s.replaced = 0
	st.Wall = time.Since(q.start)
	q.stats = st
	return st, nil
}

// enqueue queues one session query on this part's stream: references up,
// index built, observations re-sorted if they changed, query, changed
// count, and the answers down when want is set; collect finishes it.
func (p *residentPart) enqueue(s *gpuSession, refs *refSet, want bool, t *stageTimes) error {
	drv, stream, m, d := p.d.drv, p.stream, p.n(), p.d
	up := time.Now()
	if err := p.uploadRefs(refs); err != nil {
		return fmt.Errorf("uploading references: %w", err)
	}
	t.upload += time.Since(up)
	if err := drv.EventRecord(p.ev0, stream); err != nil {
		return err
	}
	if err := drv.MemsetD32Async(p.nflag.ptr, 0, 1, stream); err != nil {
		return err
	}
	l := bruteLaunch{
		lat: p.lat.ptr, lon: p.lon.ptr, nobs: m,
		ref32: p.refs.ref32.ptr, ref64: p.refs.ref64.ptr, nref: refs.n,
		outIdx: p.outIdx.ptr, outDist: p.outDist.ptr,
		flagged: p.flagged.ptr, nflagged: p.nflag.ptr,
		refineBlocks: d.info.Multiprocessors * 8,
	}
	shape := s.plan.shape
	p.shape = shape
	if shape.g > 0 {
		if err := p.refs.buildGrid(drv, d.grid, stream, shape, refs.n); err != nil {
			return fmt.Errorf("building the grid index: %w", err)
		}
		if err := drv.EventRecord(p.evIdx, stream); err != nil {
			return err
		}
		if p.sortedShape != shape || 8*p.patched > m {
			for _, b := range []struct {
				buf   *buffer
				bytes int
			}{{&p.hist, 4 * shape.cells()}, {&p.sums, 4 * shape.scanSums()}} {
				if err := b.buf.ensure(drv, b.bytes, false, 0); err != nil {
					return err
				}
			}
			if err := d.grid.sortObs(drv, stream, prec(s.is32), 0, 0, m, shape, p.recs.ptr,
				sortBufs{keys: p.keys.ptr, hist: p.hist.ptr, sums: p.sums.ptr}, p.sorted.ptr, p.pos.ptr); err != nil {
				return err
			}
			p.sortedShape, p.patched = shape, 0
		}
		if err := d.grid.runQuery(drv, stream, gridQuery{
			obs: p.sorted.ptr, nobs: m, cellStart: p.refs.cellStart.ptr, sorted: p.refs.sorted.ptr, runs: p.refs.trimmed.ptr,
			shape: shape, ref64: p.refs.ref64.ptr, outIdx: p.outIdx.ptr, outDist: p.outDist.ptr,
			refined: p.nflag.ptr,
		}); err != nil {
			return err
		}
	} else {
		partials := max(m, d.minPartials())
		for _, b := range []*buffer{&p.partD1, &p.partD2, &p.partIdx} {
			if err := b.ensure(drv, 4*partials, false, 0); err != nil {
				return err
			}
		}
		l.partD1, l.partD2, l.partIdx = p.partD1.ptr, p.partD2.ptr, p.partIdx.ptr
		l.slices, l.sliceLen = d.slices(m, refs.n, partials)
		if err := d.brute[prec(s.is32)].run(drv, stream, l); err != nil {
			return err
		}
		if err := drv.EventRecord(p.evIdx, stream); err != nil {
			return err
		}
	}
	if refs.dups {
		if err := d.resident.runMapIndex(drv, stream, p.outIdx.ptr, m, p.orig.ptr); err != nil {
			return err
		}
	}
	if err := drv.MemsetD32Async(p.count.ptr, 0, 2, stream); err != nil {
		return err
	}
	if err := d.resident.runCountChanged(drv, stream, p.outIdx.ptr, p.prev.ptr, m, p.count.ptr); err != nil {
		return err
	}
	if err := drv.EventRecord(p.evStop, stream); err != nil {
		return err
	}
	if err := drv.MemcpyDtoHAsync(p.hostSmall.p, p.count.ptr, 8, stream); err != nil {
		return err
	}
	if err := drv.MemcpyDtoHAsync(unsafe.Add(p.hostSmall.p, 8), p.nflag.ptr, 4, stream); err != nil {
		return err
	}
	if want {
		if err := p.hostOut.ensure(drv, 8*m); err != nil {
			return err
		}
		if err := drv.MemcpyDtoHAsync(p.hostOut.p, p.outIdx.ptr, uint64(4*m), stream); err != nil {
			return err
		}
		if err := drv.MemcpyDtoHAsync(unsafe.Add(p.hostOut.p, 4*m), p.outDist.ptr, uint64(4*m), stream); err != nil {
			return err
		}
	}
	if err := drv.EventRecord(p.evOut, stream); err != nil {
		return err
	}
	return nil
}

// collect waits for the part's queued query and reads its results: stage
// times into t, answers into out when want is set, and the changed count.
func (p *residentPart) collect(out Result, want bool, t *stageTimes) (int, error) {
	drv, stream, m, shape := p.d.drv, p.stream, p.n(), p.shape
	if err := drv.StreamSynchronize(stream); err != nil {
		return 0, err
	}
	p.repQueued = false
	kernel, err := drv.EventElapsed(p.ev0, p.evStop)
	if err != nil {
		return 0, err
	}
	t.kernel += kernel
	if shape.g > 0 {
		idx, err := drv.EventElapsed(p.ev0, p.evIdx)
		if err != nil {
			return 0, err
		}
		t.index += idx
	}
	down, err := drv.EventElapsed(p.evStop, p.evOut)
	if err != nil {
		return 0, err
	}
	t.download += down
	t.refined += int(*(*uint32)(unsafe.Add(p.hostSmall.p, 8)))
	if want {
		parallelCopy(out.Index[p.lo:p.hi], view[uint32](p.hostOut.p, 0, m))
		parallelCopy(out.Distance[p.lo:p.hi], view[float32](p.hostOut.p, m, m))
	}
	return int(*(*uint64)(p.hostSmall.p)), nil
}

// uploadRefs stages the prepared references (float4 and fp64 unit vectors,
// and the index map when duplicates were merged) in pinned memory and
// copies them on the part's stream, ahead of the kernels that read them.
// The staging is free again once the query's stream synchronizes.
func (p *residentPart) uploadRefs(refs *refSet) error {
	drv, n := p.d.drv, refs.n
	n32, n64 := 16*n, 24*n
	nOrig := 0
	if refs.dups {
		nOrig = 4 * len(refs.orig)
	}
	if err := p.hostRefs.ensure(drv, n32+n64+nOrig); err != nil {
		return err
	}
	copy(view[float32](p.hostRefs.p, 0, 4*n), refs.xyzw)
	copy(view[float64](unsafe.Add(p.hostRefs.p, n32), 0, 3*n), refs.xyz64)
	copies := []struct {
		buf   *buffer
		off   int
		bytes int
	}{{&p.refs.ref32, 0, n32}, {&p.refs.ref64, n32, n64}}
	if refs.dups {
		copy(view[uint32](unsafe.Add(p.hostRefs.p, n32+n64), 0, len(refs.orig)), refs.orig)
		copies = append(copies, struct {
			buf   *buffer
			off   int
			bytes int
		}{&p.orig, n32 + n64, nOrig})
	}
	for _, c := range copies {
		if err := c.buf.ensure(drv, c.bytes, false, 0); err != nil {
			return err
		}
		if err := drv.MemcpyHtoDAsync(c.buf.ptr, unsafe.Add(p.hostRefs.p, c.off), uint64(c.bytes), p.stream); err != nil {
			return err
		}
	}
	return nil
}
