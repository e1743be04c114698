package gpu

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unsafe"

	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/kernels"
)

// stageTimes is device time by stage, summed over jobs.
type stageTimes struct {
	index, upload, kernel, download time.Duration
	refined                         int
	note                            string // how this GPU's index came out, when it differs by GPU
}

// addDevice folds one GPU's stage times into st.
func addDevice(st *engine.Stats, t stageTimes) {
	st.Kernel = max(st.Kernel, t.kernel)
	st.Index = max(st.Index, t.index)
	st.Upload = max(st.Upload, t.upload)
	st.Download = max(st.Download, t.download)
	st.Refined += t.refined
	if t.note != "" && !strings.Contains(st.Note, t.note) {
		st.Note = strings.TrimPrefix(st.Note+"; "+t.note, "; ")
	}
}

// gpuQuery is one query in flight on a GPU stream, the unit both streaming
// jobs (stream.go) and session queries (session.go) are made of:
// its device buffers, the events around its stages, and the pinned memory
// its answers come back through. Streaming copies the observations in per
// job; a session keeps them resident. Everything after that is this file's:
// sort by cell, rank, map merged duplicates, copy the answers out, collect.
type gpuQuery struct {
	stream cuda.Stream
	// Events around the stages, for the per-stage times in Stats: the
	// observations' copy in (streaming), the kernels (start, the end of the
	// grid index build in sessions, stop) and the answers' copy out.
	evIn, evCopied, evStart, evIndex, evStop, evOut cuda.Event

	lat, lon                buffer     // radian columns (managed in ManagedMemory mode)
	recs, sorted            buffer     // grid: unit-vector records, and sorted by cell
	keys, hist, sums        buffer     // grid: the observation sort's scratch
	outIdx, outDist         buffer     // the answers (managed in ManagedMemory mode)
	flagged, nflag          buffer     // near ties re-ranked in float64, and their count
	firstBad                buffer     // the lowest invalid point of a job checked on the device (valid.go)
	partD1, partD2, partIdx buffer     // brute force: per-slice partials (seed port: its blocks' results)
	hostOut                 pinnedHost // the answers: indices, then distances
	hostSmall               pinnedHost // counters: changed answers (uint64), refined (uint32), first bad point (uint64, at 16)
}

func newGPUQuery(drv *cuda.Driver) (*gpuQuery, error) {
	q := &gpuQuery{}
	var err error
	if q.stream, err = drv.StreamCreate(cuda.StreamNonBlocking); err != nil {
		return nil, err
	}
	for _, e := range q.events() {
		if *e, err = drv.EventCreate(cuda.EventDefault); err != nil {
			return q, errors.Join(err, q.free(drv))
		}
	}
	return q, q.hostSmall.ensure(drv, 24)
}

func (q *gpuQuery) events() []*cuda.Event {
	return []*cuda.Event{&q.evIn, &q.evCopied, &q.evStart, &q.evIndex, &q.evStop, &q.evOut}
}

func (q *gpuQuery) buffers() []*buffer {
	return []*buffer{&q.lat, &q.lon, &q.recs, &q.sorted, &q.keys, &q.hist, &q.sums,
		&q.outIdx, &q.outDist, &q.flagged, &q.nflag, &q.firstBad, &q.partD1, &q.partD2, &q.partIdx}
}

// free waits for the stream and releases everything the query holds.
func (q *gpuQuery) free(drv *cuda.Driver) error {
	var errs []error
	if q.stream != 0 {
		errs = append(errs, drv.StreamSynchronize(q.stream))
	}
	for _, b := range q.buffers() {
		errs = append(errs, b.free(drv))
	}
	errs = append(errs, q.hostOut.free(drv), q.hostSmall.free(drv))
	for _, e := range q.events() {
		if *e != 0 {
			errs = append(errs, drv.EventDestroy(*e))
		}
	}
	if q.stream != 0 {
		errs = append(errs, drv.StreamDestroy(q.stream))
	}
	return errors.Join(errs...)
}

// ensureAll allocates each buffer to at least its size.
func ensureAll(drv *cuda.Driver, allocs []alloc, dev cuda.Device) error {
	for _, a := range allocs {
		if err := a.buf.ensure(drv, a.bytes, a.managed, dev); err != nil {
			return fmt.Errorf("allocating %d MiB: %w", a.bytes>>20, err)
		}
	}
	return nil
}

// alloc is one buffer's wanted size (managed: in managed memory).
type alloc struct {
	buf     *buffer
	bytes   int
	managed bool
}

// ensureRanking sizes the buffers the ranking of up to m observations
// needs besides the columns and answers: the flagged list, and the grid
// sort's output and scratch for shape (sessions keep their own unsorted
// records) or brute force's partials (at least partials entries).
func (q *gpuQuery) ensureRanking(drv *cuda.Driver, m int, shape index.GridShape, partials int) error {
	allocs := []alloc{{buf: &q.flagged, bytes: 4 * m}, {buf: &q.nflag, bytes: 4}, {buf: &q.firstBad, bytes: 8}}
	if shape.G > 0 {
		keys := index.SortHistLen(m, shape)
		allocs = append(allocs, alloc{buf: &q.sorted, bytes: m * kernels.ObsRecBytes},
			alloc{buf: &q.keys, bytes: m * sortKeyBytes},
			alloc{buf: &q.hist, bytes: 4 * keys}, alloc{buf: &q.sums, bytes: 4 * index.ScanSums(keys)})
	} else {
		allocs = append(allocs, alloc{buf: &q.partD1, bytes: 4 * partials},
			alloc{buf: &q.partD2, bytes: 4 * partials}, alloc{buf: &q.partIdx, bytes: 4 * partials})
	}
	return ensureAll(drv, allocs, 0)
}

// rankPlan is how a query's observations are ranked against the references
// on the device.
type rankPlan struct {
	algo  engine.Algorithm
	shape index.GridShape // g > 0: the grid query over records sorted by cell
	tree  bool            // the k-d tree query instead, over the records sorted by shape's cells
	cells int             // > 0: the face-cell query instead (cells a face edge), over the columns, unsorted
	prec  int             // 0: float64 radian columns, 1: float32
	nref  int             // references on the device (distinct ones for the exact kernels)
}

// sortByCell queues the observation sort for the grid: from the radian
// columns (fromColumns: each record made as it is moved) or from the
// records already in recs (a session's), into sorted; pos (0: none)
// receives each record's place.
func (q *gpuQuery) sortByCell(d *gpuDevice, m int, p rankPlan, fromColumns bool, pos cuda.DevicePtr) error {
	lat, lon := cuda.DevicePtr(0), cuda.DevicePtr(0)
	if fromColumns {
		lat, lon = q.lat.ptr, q.lon.ptr
	}
	return d.grid.sortObs(d.drv, q.stream, obsSort{prec: p.prec, lat: lat, lon: lon, n: m, shape: p.shape,
		recs: q.recs.ptr, scratch: q.sortBufs(), sorted: q.sorted.ptr, pos: pos})
}

func (q *gpuQuery) sortBufs() sortBufs {
	return sortBufs{keys: q.keys.ptr, hist: q.hist.ptr, sums: q.sums.ptr, histLen: q.hist.bytes / 4}
}

// rank queues the ranking of m observations against refs: the grid or k-d
// tree query over the sorted records, brute force over the columns, or the
// seed port;
// then, when duplicates were merged, the map back to input indices.
func (q *gpuQuery) rank(d *gpuDevice, m int, refs *deviceRefs, p rankPlan) error {
	if err := q.rankOnly(d, m, refs, p); err != nil {
		return err
	}
	return q.mapAnswers(d, m, refs, p)
}

// mapAnswers queues the map of the m answers from distinct-reference
// indices back to input ones, when duplicates were merged (the seed port
// ranks the input references themselves).
func (q *gpuQuery) mapAnswers(d *gpuDevice, m int, refs *deviceRefs, p rankPlan) error {
	if p.algo == engine.Seed || !refs.dups {
		return nil
	}
	return d.resident.runMapIndex(d.drv, q.stream, q.outIdx.ptr, m, refs.orig.ptr)
}

// rankOnly is rank without the map back to input indices.
func (q *gpuQuery) rankOnly(d *gpuDevice, m int, refs *deviceRefs, p rankPlan) error {
	if p.algo == engine.Seed {
		return d.seed[p.prec].run(d.drv, q.stream, seedLaunch{refLat: refs.lat.ptr, refLon: refs.lon.ptr, nref: p.nref,
			lat: q.lat.ptr, lon: q.lon.ptr, nobs: m, blockIdx: q.partIdx.ptr, blockDist: q.partD1.ptr,
			outIdx: q.outIdx.ptr, outDist: q.outDist.ptr})
	}
	if err := d.drv.MemsetD32Async(q.nflag.ptr, 0, 1, q.stream); err != nil {
		return err
	}
	var err error
	switch {
	case p.cells > 0:
		c := &refs.cells
		err = d.cells.run(d.drv, q.stream, cellsQuery{prec: p.prec, lat: q.lat.ptr, lon: q.lon.ptr, nobs: m, side: p.cells,
			counts: c.counts.ptr, lists: c.lists.ptr, ref64: refs.ref64.ptr, outIdx: q.outIdx.ptr, outDist: q.outDist.ptr,
			nflag: q.nflag.ptr, status: c.status.ptr})
	case p.tree:
		err = d.tree.run(d.drv, q.stream, treeQuery{obs: q.sorted.ptr, nobs: m, nodes: refs.treeNodes.ptr,
			refs: refs.treeRefs.ptr, ref64: refs.ref64.ptr, outIdx: q.outIdx.ptr, outDist: q.outDist.ptr, refined: q.nflag.ptr})
	case p.shape.G > 0:
		err = d.grid.runQuery(d.drv, q.stream, gridQuery{gridIndexArgs: refs.gridIndex(q.sorted.ptr, m, p.shape),
			outIdx: q.outIdx.ptr, outDist: q.outDist.ptr, refined: q.nflag.ptr})
	default:
		err = d.brute[p.prec].run(d.drv, q.stream, q.bruteLaunch(d, m, refs, p.nref))
	}
	return err
}

func (q *gpuQuery) bruteLaunch(d *gpuDevice, m int, refs *deviceRefs, nref int) bruteLaunch {
	l := bruteLaunch{
		lat: q.lat.ptr, lon: q.lon.ptr, nobs: m, ref32: refs.ref32.ptr, ref64: refs.ref64.ptr, nref: nref,
		partD1: q.partD1.ptr, partD2: q.partD2.ptr, partIdx: q.partIdx.ptr,
		outIdx: q.outIdx.ptr, outDist: q.outDist.ptr, flagged: q.flagged.ptr, nflagged: q.nflag.ptr,
		refineBlocks: d.info.Multiprocessors * 8,
	}
	l.slices, l.sliceLen = d.slices(m, nref, q.partD1.bytes/4)
	return l
}

// download queues the copy of m answers and the refined count into the
// query's pinned staging, then records evOut.
func (q *gpuQuery) download(drv *cuda.Driver, m int) error {
	if err := q.hostOut.ensure(drv, 8*m); err != nil {
		return fmt.Errorf("pinning %d MiB of host memory: %w", 8*m>>20, err)
	}
	return q.downloadTo(drv, nil, m, q.hostOut.p, unsafe.Add(q.hostOut.p, 4*m))
}

// downloadTo is download into the page-locked memory at idx and dist (a
// caller's answers, registered in h) instead of the staging.
func (q *gpuQuery) downloadTo(drv *cuda.Driver, h *hostAllocs, m int, idx, dist unsafe.Pointer) error {
	if err := drv.MemcpyDtoHAsync(unsafe.Add(q.hostSmall.p, 8), q.nflag.ptr, 4, q.stream); err != nil {
		return err
	}
	if err := copyOut(drv, h, idx, q.outIdx.ptr, 4*m, q.stream); err != nil {
		return err
	}
	if err := copyOut(drv, h, dist, q.outDist.ptr, 4*m, q.stream); err != nil {
		return err
	}
	return drv.EventRecord(q.evOut, q.stream)
}

// answers are the host views of the m answers download brought back.
func (q *gpuQuery) answers(m int) ([]uint32, []float32) {
	return view[uint32](q.hostOut.p, 0, m), view[float32](q.hostOut.p, m, m)
}

// refined is the count of near ties re-ranked in float64 that download
// brought back.
func (q *gpuQuery) refined() int { return int(*(*uint32)(unsafe.Add(q.hostSmall.p, 8))) }

// elapsed adds the device time between each pair of events to its sum.
func elapsed(drv *cuda.Driver, spans []eventSpan) error {
	for _, s := range spans {
		el, err := drv.EventElapsed(s.from, s.to)
		if err != nil {
			return err
		}
		*s.sum += el
	}
	return nil
}

// eventSpan is a stage between two recorded events and the sum its time
// goes to.
type eventSpan struct {
	from, to cuda.Event
	sum      *time.Duration
}
