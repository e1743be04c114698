package gpu

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
	"unsafe"

	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/kernels"
	"github.com/geoknn/geoknn/internal/parallel"
)

// NewSession places obs on the engine's GPUs, split into one contiguous
// range a GPU, for repeated queries (see Session). Each GPU keeps its
// range's radian columns and, for the grid algorithm, their unit-vector
// records and the copy sorted by cell, plus the answers of the last query;
// the observations must fit in 80% of each GPU's free memory.
func (g *GPU) NewSession(obs index.Points, opts engine.SessionOptions) (engine.Session, error) {
	if err := engine.CheckSessionOptions(opts); err != nil {
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
	devs, err := g.allDevs()
	if err != nil {
		return nil, err
	}
	replan := opts.Replan
	if replan == 0 {
		replan = 16
	}
	s := &gpuSession{g: g, opts: opts, n: n, is32: obs.Is32(), sample: engine.NewObsSample(obs),
		plan: engine.SessionPlan{Replan: replan}}
	per := (n + len(devs) - 1) / len(devs)
	if err := checkPartLen(per, len(devs)); err != nil {
		return nil, err
	}
	for k, d := range devs {
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
	if g.sessions == nil {
		g.sessions = map[*gpuSession]struct{}{}
	}
	g.sessions[s] = struct{}{}
	return s, nil
}

type gpuSession struct {
	g        *GPU
	opts     engine.SessionOptions
	n        int
	is32     bool
	parts    []*residentPart
	sample   *engine.ObsSample
	plan     engine.SessionPlan
	refs     index.RefSet // reused every query
	replaced int
	closed   bool

	// The movers (SetMovers): how many, their top speed, their positions
	// on the host as last read (fresh: current), whether a query against
	// other references overwrote their unit vectors on the GPUs, and
	// whether replacements drawn on the GPUs left the planning sample
	// behind.
	nmov                      int
	mvTop                     float64
	mvLat, mvLon              []float64
	mvHostFresh, mvUnitsStale bool
	sampleStale               bool
}

// residentPart is one GPU's range [lo, hi) of a session's observations: a
// query whose observation columns (and, for the grid, records and their
// copy sorted by cell) stay on the device. Its methods run on the device's
// thread (gpuDevice.onThread).
type residentPart struct {
	*gpuQuery
	d      *gpuDevice
	lo, hi int
	refs   deviceRefs

	pos buffer // pos[i]: where record i is in sorted
	// The places in sorted that replacements patched since the sort (plist,
	// pcount of them), and those records sorted among themselves.
	plist, pcount              buffer
	patchedRecs, patchedSorted buffer
	prev, count                buffer // the previous query's answers; the changed count
	repIdx, repLat, repLon     buffer // a replacement's staging on the device
	hostRep                    pinnedHost
	movers                     moverBufs

	shape       index.GridShape // the cells of the query in flight (g == 0: brute force)
	sortedShape index.GridShape // the cells recs were last sorted by (g == 0: not sorted)
	repQueued   bool            // a replacement's copies may still be reading hostRep
	noCells     bool            // the plan's lists were refused: not built again until the next plan
	onMovers    bool            // the query in flight is against the movers
	waitCells   bool            // build the lists level by level, each level's outcome read first
	patched     int             // records replaced in place in sorted since the sort: the device's list count, exactly
}

func (p *residentPart) n() int { return p.hi - p.lo }

// maxPartLen is the most observations a GPU holds of a session: below
// it runCountChanged keeps its full grid (up to 4,096 blocks, 8 an SM of
// 512) and count_changed's 32-bit index plus stride stays within 2^31.
const maxPartLen = 1<<31 - 1<<20

// checkPartLen refuses parts of per observations on gpus GPUs past
// maxPartLen.
func checkPartLen(per, gpus int) error {
	if per > maxPartLen {
		return fmt.Errorf("session: %d observations a GPU on %d GPUs, more than %d: use more GPUs", per, gpus, maxPartLen)
	}
	return nil
}

// open allocates the part's buffers and uploads its observations.
func (p *residentPart) open(s *gpuSession, obs index.Points) error {
	drv, m := p.d.drv, p.n()
	if err := p.checkFits(s); err != nil {
		return err
	}
	var err error
	if p.gpuQuery, err = newGPUQuery(drv); err != nil {
		return err
	}
	if err := ensureAll(drv, p.allocs(s), 0); err != nil {
		return err
	}
	if err := p.uploadObs(obs); err != nil {
		return fmt.Errorf("uploading observations: %w", err)
	}
	if err := drv.MemsetD32Async(p.prev.ptr, engine.NoAnswer, uint64(m), p.stream); err != nil {
		return err
	}
	if s.opts.Algorithm == engine.Grid {
		err := p.d.grid.prepObs(drv, p.stream, obsPrep{prec: prec(s.is32), lat: p.lat.ptr, lon: p.lon.ptr, n: m,
			recs: p.recs.ptr})
		if err != nil {
			return err
		}
	}
	return drv.StreamSynchronize(p.stream)
}

// checkFits refuses a part whose resident buffers would take more than 80%
// of the GPU's free memory.
func (p *residentPart) checkFits(s *gpuSession) error {
	m := p.n()
	bytes := m * (2*elemBytes(s.is32) + 4*3 + 4)
	if s.opts.Algorithm == engine.Grid {
		bytes += m*(2*kernels.ObsRecBytes+sortKeyBytes+4) + patchCapacity(m)*(2*kernels.ObsRecBytes+4)
	}
	free, _, err := p.d.drv.MemGetInfo()
	if err != nil {
		return err
	}
	if uint64(bytes) > free/10*8 {
		return fmt.Errorf("%d observations need %d MiB, %d MiB free: use more GPUs or queries that stream (Nearest)",
			m, bytes>>20, free>>20)
	}
	return nil
}

// allocs lists the buffers a part keeps for the whole session.
func (p *residentPart) allocs(s *gpuSession) []alloc {
	m, elem := p.n(), elemBytes(s.is32)
	allocs := []alloc{{buf: &p.lat, bytes: m * elem}, {buf: &p.lon, bytes: m * elem},
		{buf: &p.outIdx, bytes: 4 * m}, {buf: &p.outDist, bytes: 4 * m}, {buf: &p.prev, bytes: 4 * m},
		{buf: &p.flagged, bytes: 4 * m}, {buf: &p.nflag, bytes: 4}, {buf: &p.count, bytes: 8}}
	if s.opts.Algorithm == engine.Grid {
		np := patchCapacity(m)
		allocs = append(allocs, alloc{buf: &p.recs, bytes: m * kernels.ObsRecBytes},
			alloc{buf: &p.sorted, bytes: m * kernels.ObsRecBytes}, alloc{buf: &p.keys, bytes: sortKeyBytes * m},
			alloc{buf: &p.pos, bytes: 4 * m}, alloc{buf: &p.plist, bytes: 4 * np}, alloc{buf: &p.pcount, bytes: 4},
			alloc{buf: &p.patchedRecs, bytes: np * kernels.ObsRecBytes},
			alloc{buf: &p.patchedSorted, bytes: np * kernels.ObsRecBytes})
	}
	return allocs
}

// uploadObs copies the part's observation columns to the device and waits.
func (p *residentPart) uploadObs(obs index.Points) error {
	if obs.Gen != nil {
		if err := p.d.generate.run(p.d.drv, p.stream, *obs.Gen, p.lat.ptr, p.lon.ptr); err != nil {
			return err
		}
		return p.d.drv.StreamSynchronize(p.stream)
	}
	// One column at a time through the answers' staging (8 bytes an
	// observation, needed anyway): a session keeps no pinned memory that
	// only its first upload uses.
	m, elem := obs.Len(), elemBytes(obs.Is32())
	if err := p.hostOut.ensure(p.d.drv, 8*m); err != nil {
		return err
	}
	staging := unsafe.Slice((*byte)(p.hostOut.p), m*elem)
	for k, b := range []*buffer{&p.lat, &p.lon} {
		copy(staging, columnBytes(obs, k))
		if err := p.d.drv.MemcpyHtoDAsync(b.ptr, p.hostOut.p, uint64(m*elem), p.stream); err != nil {
			return err
		}
		if err := p.d.drv.StreamSynchronize(p.stream); err != nil {
			return err
		}
	}
	return nil
}

// columnBytes is obs's latitude (k = 0) or longitude (k = 1) column as
// bytes, in its precision.
func columnBytes(obs index.Points, k int) []byte {
	cols32, cols64 := [2][]float32{obs.Lat32, obs.Lon32}, [2][]float64{obs.Lat64, obs.Lon64}
	if obs.Is32() {
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(cols32[k]))), 4*len(cols32[k]))
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(cols64[k]))), 8*len(cols64[k]))
}

func elemBytes(is32 bool) int {
	if is32 {
		return 4
	}
	return 8
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
	if p.gpuQuery != nil {
		errs = append(errs, p.gpuQuery.free(drv))
	}
	for _, b := range []*buffer{&p.pos, &p.prev, &p.count, &p.repIdx, &p.repLat, &p.repLon,
		&p.plist, &p.pcount, &p.patchedRecs, &p.patchedSorted} {
		errs = append(errs, b.free(drv))
	}
	errs = append(errs, p.refs.free(drv), p.hostRep.free(drv), p.movers.free(p))
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
	delete(s.g.sessions, s)
	var errs []error
	for _, p := range s.parts {
		errs = append(errs, p.d.onThread(p.close))
	}
	s.parts = nil
	return errors.Join(errs...)
}

func (s *gpuSession) Replace(ctx context.Context, idx []uint32, pts index.Points) error {
	if err := engine.CheckReplace(idx, pts, s.n); err != nil {
		return err
	}
	s.g.mu.Lock()
	defer s.g.mu.Unlock()
	if s.closed {
		return errors.New("session: closed")
	}
	err := onEach(ctx, s.devices(), func(_ context.Context, k int) error {
		p := s.parts[k]
		a, _ := slices.BinarySearch(idx, uint32(p.lo))
		b, _ := slices.BinarySearch(idx, uint32(p.hi))
		if a == b {
			return nil
		}
		return p.replace(s, idx[a:b], pts.Slice(a, b))
	})
	if err != nil {
		return fmt.Errorf("session: replace: %w", err)
	}
	s.sample.Replace(idx, pts)
	s.replaced += len(idx)
	return nil
}

// replace stages k new observations (global indices idx) in pinned memory,
// copies them over and queues the replace kernel.
func (p *residentPart) replace(s *gpuSession, idx []uint32, pts index.Points) error {
	drv, k, elem := p.d.drv, len(idx), elemBytes(s.is32)
	if p.repQueued {
		// An earlier replacement's copies may still read the staging.
		if err := drv.StreamSynchronize(p.stream); err != nil {
			return err
		}
		p.repQueued = false
	}
	idxBytes := align8(4 * k) // the columns start 8-byte aligned
	if err := p.hostRep.ensure(drv, idxBytes+2*elem*k); err != nil {
		return err
	}
	err := ensureAll(drv, []alloc{{buf: &p.repIdx, bytes: 4 * k}, {buf: &p.repLat, bytes: elem * k},
		{buf: &p.repLon, bytes: elem * k}}, 0)
	if err != nil {
		return err
	}
	cols := unsafe.Add(p.hostRep.p, idxBytes)
	p.stageReplacement(s.is32, idx, pts, cols)
	for _, c := range []struct {
		dst cuda.DevicePtr
		src unsafe.Pointer
		n   int
	}{{p.repIdx.ptr, p.hostRep.p, 4 * k}, {p.repLat.ptr, cols, elem * k}, {p.repLon.ptr, unsafe.Add(cols, elem*k), elem * k}} {
		if err := drv.MemcpyHtoDAsync(c.dst, c.src, uint64(c.n), p.stream); err != nil {
			return err
		}
	}
	return p.queueReplace(s, k)
}

// stageReplacement writes the local indices and the new points, in the
// session's precision, into the pinned staging (cols: the columns' start).
func (p *residentPart) stageReplacement(is32 bool, idx []uint32, pts index.Points, cols unsafe.Pointer) {
	k := len(idx)
	local := view[uint32](p.hostRep.p, 0, k)
	parallel.Blocks(k, 1<<14, 0, func(_, lo, hi int) {
		for j := lo; j < hi; j++ {
			local[j] = idx[j] - uint32(p.lo)
		}
		if is32 {
			lat, lon := view[float32](cols, 0, k), view[float32](cols, k, k)
			for j := lo; j < hi; j++ {
				a, b := pts.At(j)
				lat[j], lon[j] = float32(a), float32(b)
			}
			return
		}
		lat, lon := view[float64](cols, 0, k), view[float64](cols, k, k)
		for j := lo; j < hi; j++ {
			lat[j], lon[j] = pts.At(j)
		}
	})
}

// queueReplace queues the replace kernel over the k staged points. It is
// not waited for: the next query on the stream runs after it, and the
// staging is not touched again before the stream is synchronized (the
// query's Wait, or the next replacement).
func (p *residentPart) queueReplace(s *gpuSession, k int) error {
	// Replaced records are patched into the sorted copy where the old ones
	// were, marked and listed: the query answers them apart, sorted among
	// themselves, until the next sort (once 1/resortFraction is patched).
	var sorted, pos cuda.DevicePtr
	if p.sortedShape.G > 0 {
		sorted, pos = p.sorted.ptr, p.pos.ptr
		p.patched += k
	}
	p.repQueued = true
	return p.d.resident.runReplace(p.d.drv, p.stream, replaceLaunch{prec: prec(s.is32), idx: p.repIdx.ptr,
		newLat: p.repLat.ptr, newLon: p.repLon.ptr, k: k, lat: p.lat.ptr, lon: p.lon.ptr, recs: p.recs.ptr,
		sorted: sorted, pos: pos, prev: p.prev.ptr, patched: p.patchList()})
}

// patchCapacity is the patched places a part of m observations lists: as
// many as a query takes without re-sorting (1/resortFraction of them).
func patchCapacity(m int) int { return m/resortFraction + 1 }

// patchList is where replacements list the places they patch in sorted
// (none before the first sort).
func (p *residentPart) patchList() patchList {
	if p.sortedShape.G == 0 {
		return patchList{}
	}
	return patchList{list: p.plist.ptr, count: p.pcount.ptr, capacity: patchCapacity(p.n())}
}

func (s *gpuSession) Nearest(ctx context.Context, ref index.Points, out engine.Result) (engine.SessionStats, error) {
	q, err := s.Start(ctx, ref, out)
	if err != nil {
		return engine.SessionStats{}, err
	}
	return q.Wait()
}

// Start prepares the references (host), then queues every GPU's part of the
// query and returns; Wait collects it. The engine stays locked in between.
func (s *gpuSession) Start(ctx context.Context, ref index.Points, out engine.Result) (engine.Pending, error) {
	start := time.Now()
	want, err := s.checkQuery(ref, out)
	if err != nil {
		return nil, err
	}
	s.g.mu.Lock()
	if s.closed {
		s.g.mu.Unlock()
		return nil, errors.New("session: closed")
	}
	s.refs.Prepare(ref)
	s.plan.Update(s.opts, s.sample, &s.refs, index.GPUSessionGridCost)
	return s.enqueueAll(ctx, start, out, want, false)
}

// enqueueAll queues every GPU's part of a query against s.refs (or the
// movers) and returns it under way; the engine stays locked until Wait.
func (s *gpuSession) enqueueAll(ctx context.Context, start time.Time, out engine.Result, want, movers bool) (engine.Pending, error) {
	q := &gpuPending{s: s, start: start, prepare: time.Since(start), out: out, want: want,
		times: make([]stageTimes, len(s.parts)), changed: make([]int, len(s.parts))}
	err := onEach(ctx, s.devices(), func(_ context.Context, k int) error {
		return s.parts[k].enqueue(s, movers, want, &q.times[k])
	})
	if s.nmov > 0 {
		// A query against other references overwrote the movers' unit
		// vectors; one against the movers made them current.
		s.mvUnitsStale = !movers
	}
	if err != nil {
		// Leave nothing in flight behind the error.
		for _, p := range s.parts {
			p.d.onThread(func() error { return p.d.drv.StreamSynchronize(p.stream) })
		}
		s.g.mu.Unlock()
		return nil, fmt.Errorf("session: %w", err)
	}
	return q, nil
}

// checkQuery checks a query's references and result, and reports whether
// the answers are wanted on the host.
func (s *gpuSession) checkQuery(ref index.Points, out engine.Result) (bool, error) {
	if err := ref.Check("references"); err != nil {
		return false, err
	}
	if ref.Len() == 0 || ref.Len() > 1<<31-1 {
		return false, fmt.Errorf("references: %d (want 1 to %d)", ref.Len(), 1<<31-1)
	}
	return s.checkOut(out)
}

// checkOut checks a query's result, and reports whether the answers are
// wanted on the host.
func (s *gpuSession) checkOut(out engine.Result) (bool, error) {
	want := out.Index != nil || out.Distance != nil
	if want && (len(out.Index) != s.n || len(out.Distance) != s.n) {
		return false, fmt.Errorf("session: result has room for %d indices and %d distances, want %d",
			len(out.Index), len(out.Distance), s.n)
	}
	return want, nil
}

// devices lists the GPU of each part, in part order.
func (s *gpuSession) devices() []*gpuDevice {
	devs := make([]*gpuDevice, len(s.parts))
	for k, p := range s.parts {
		devs[k] = p.d
	}
	return devs
}

// gpuPending is a started session query.
type gpuPending struct {
	s       *gpuSession
	start   time.Time
	prepare time.Duration
	out     engine.Result
	want    bool
	times   []stageTimes
	changed []int
	done    bool
	stats   engine.SessionStats
	err     error
}

func (q *gpuPending) Wait() (engine.SessionStats, error) {
	if q.done {
		return q.stats, q.err
	}
	q.done = true
	s := q.s
	defer s.g.mu.Unlock()
	q.err = onEach(context.Background(), s.devices(), func(_ context.Context, k int) error {
		var err error
		q.changed[k], err = s.parts[k].collect(s, q.out, q.want, &q.times[k])
		return err
	})
	if q.err != nil {
		q.err = fmt.Errorf("session: %w", q.err)
		return engine.SessionStats{}, q.err
	}
	q.stats = q.sessionStats()
	s.replaced = 0
	return q.stats, nil
}

// sessionStats sums the parts' results.
func (q *gpuPending) sessionStats() engine.SessionStats {
	s := q.s
	st := engine.SessionStats{Stats: engine.Stats{Engine: "gpu", Jobs: len(s.parts), Note: s.plan.Note}, Replaced: s.replaced,
		Prepare: q.prepare}
	for k, p := range s.parts {
		st.Devices = append(st.Devices, p.d.info.String())
		addDevice(&st.Stats, q.times[k])
		st.Changed += q.changed[k]
	}
	st.Wall = time.Since(q.start)
	return st
}

// enqueue queues one session query on this part's stream: references up,
// index built, observations re-sorted if they changed, the ranking, the
// changed count, and the answers down when want is set; collect finishes
// it.
func (p *residentPart) enqueue(s *gpuSession, movers, want bool, t *stageTimes) error {
	drv, stream, m, d := p.d.drv, p.stream, p.n(), p.d
	p.onMovers = movers
	p.refs.cells.unchecked = false // a query that failed to queue left it
	nref, err := p.enqueueRefs(s, movers, t)
	if err != nil {
		return err
	}
	plan := rankPlan{algo: s.opts.Algorithm, shape: s.plan.Shape, prec: prec(s.is32), nref: nref}
	if plan.algo == engine.Grid && plan.shape.G == 0 {
		plan.algo = engine.Brute // the plan fell back
	}
	p.shape = plan.shape
	if err := p.ensureRanking(drv, m, plan.shape, max(m, d.minPartials())); err != nil {
		return err
	}
	if err := drv.EventRecord(p.evStart, stream); err != nil {
		return err
	}
	if t.note, err = p.prepareIndex(s, &plan, nref); err != nil {
		return err
	}
	if err := p.rankOnly(d, m, &p.refs, plan); err != nil {
		return err
	}
	if err := p.rankPatched(plan); err != nil {
		return err
	}
	if err := p.mapAnswers(d, m, &p.refs, plan); err != nil {
		return err
	}
	if err := p.countChanged(); err != nil {
		return err
	}
	if err := drv.EventRecord(p.evStop, stream); err != nil {
		return err
	}
	return p.downloadResults(want)
}

// enqueueRefs puts the query's references on the device: s.refs sent
// from the host, or the movers' unit vectors, already there unless a query
// against other references overwrote them. It returns their count.
func (p *residentPart) enqueueRefs(s *gpuSession, movers bool, t *stageTimes) (int, error) {
	if movers {
		if s.mvUnitsStale {
			return s.nmov, p.moveMovers(s.nmov, 0, false)
		}
		return s.nmov, nil
	}
	up := time.Now()
	if err := p.refs.stage(p.d.drv, p.stream, &s.refs, index.Points{}); err != nil {
		return 0, fmt.Errorf("uploading references: %w", err)
	}
	t.upload += time.Since(up)
	return s.refs.N, nil
}

// resortFraction: a session re-sorts its observations by cell once more
// than 1/resortFraction of them were replaced in place since the last sort.
// Until then the patched records are answered by a query of their own
// (rankPatched), sorted among themselves; on an H200 at 2^24 x 2^16 with 1%
// replaced a step, 1/32 measured best of 1/16 to 1/64 (BENCHMARKS.md,
// Simulation).
const resortFraction = 32

// prepareIndex queues the grid index build and the face cells' lists,
// which set plan.cells where they could be made; failing that, when the
// cells changed or 1/resortFraction of the sorted records were patched, the
// observations' re-sort for the grid query. evIndex marks the end of the
// index build (brute force: of nothing). It returns how the face cells
// came out ("": none tried).
func (p *residentPart) prepareIndex(s *gpuSession, plan *rankPlan, nref int) (string, error) {
	drv, m := p.d.drv, p.n()
	if plan.shape.G == 0 {
		return "", drv.EventRecord(p.evIndex, p.stream)
	}
	if err := p.refs.buildGrid(drv, p.d.grid, p.stream, plan.shape, nref); err != nil {
		return "", fmt.Errorf("building the grid index: %w", err)
	}
	note, err := p.buildCells(s, plan, nref)
	if err != nil {
		return "", err
	}
	if err := drv.EventRecord(p.evIndex, p.stream); err != nil {
		return "", err
	}
	if plan.cells > 0 {
		// The face-cell query reads the columns, which replacements
		// update: the records' sorted copy is left behind, and sorted
		// again should a later query need it.
		p.sortedShape, p.patched = index.GridShape{}, 0
		return note, nil
	}
	if p.sortedShape == plan.shape && resortFraction*p.patched <= m {
		return note, nil
	}
	if err := p.sortByCell(p.d, m, *plan, false, p.pos.ptr); err != nil {
		return "", err
	}
	if err := drv.MemsetD32Async(p.pcount.ptr, 0, 1, p.stream); err != nil {
		return "", err
	}
	p.sortedShape, p.patched = plan.shape, 0
	return note, nil
}

// buildCells builds the face cells' lists from the grid index just
// queued, for the part's observations, unless the session fixed the
// grid's side or the lists were refused since the plan was made (a refused
// build costs the most: every level is tried); plan.cells is set where
// every cell got its list. It returns how the lists came out ("": not
// tried).
//
// Where the last lists of the same side took one level, the references
// moved but a little since: the first level is queued alone and the query
// behind it with no wait (cellLists.speculate), which collect checks. Not
// with duplicates merged, whose map back to input indices would run over
// answers the query left unwritten.
func (p *residentPart) buildCells(s *gpuSession, plan *rankPlan, nref int) (string, error) {
	c := &p.refs.cells
	if s.opts.GridSide != 0 {
		return "", nil
	}
	if p.noCells && s.plan.Uses > 1 {
		return c.note(), nil
	}
	side := index.CellsSideFor(p.n(), nref, false)
	build := c.build
	if !p.waitCells && c.side == side && c.levels == 0 && !p.refs.dups {
		build = c.speculate
	}
	ok, err := build(p.d.drv, p.d.cells, p.stream, &p.refs, plan.shape, nref, side)
	if err != nil {
		return "", fmt.Errorf("building the face cells: %w", err)
	}
	if ok {
		plan.cells = c.side
	}
	p.noCells = !ok
	return c.note(), nil
}

// rankPatched queues the query of the records replacements patched into
// sorted since the sort, which the main query leaves out: gathered, sorted
// by cell among themselves (their bands are the part's), and ranked, their
// answers written at their own indices.
func (p *residentPart) rankPatched(plan rankPlan) error {
	np := p.patched
	if plan.shape.G == 0 || np == 0 {
		return nil
	}
	drv, d := p.d.drv, p.d
	if err := d.resident.runGatherPatched(drv, p.stream, p.sorted.ptr, p.plist.ptr, np, p.patchedRecs.ptr); err != nil {
		return err
	}
	err := d.grid.sortObs(drv, p.stream, obsSort{prec: plan.prec, n: np, span: p.n(), shape: plan.shape,
		recs: p.patchedRecs.ptr, scratch: p.sortBufs(), sorted: p.patchedSorted.ptr})
	if err != nil {
		return err
	}
	return d.grid.runQuery(drv, p.stream, gridQuery{gridIndexArgs: p.refs.gridIndex(p.patchedSorted.ptr, np, plan.shape),
		outIdx: p.outIdx.ptr, outDist: p.outDist.ptr, refined: p.nflag.ptr})
}

// requery queues the query in flight again, its face cells built level by
// level, and waits for it. The first try left the answers, the previous
// ones and the changed count as they were (count_changed reads the same
// status); the stage times are the second try's, the uploads' summed.
func (p *residentPart) requery(s *gpuSession, want bool, t *stageTimes) error {
	p.waitCells = true
	defer func() { p.waitCells = false }()
	err := p.enqueue(s, p.onMovers, want, t)
	// Leave nothing in flight behind an error: the next query reuses the
	// staging its copies read.
	return errors.Join(err, p.d.drv.StreamSynchronize(p.stream))
}

// countChanged queues the count of answers that differ from the previous
// query's, which a query behind unchecked face cells skips with it where
// they split or failed. collect then makes the answers the previous ones
// (takeAnswers).
func (p *residentPart) countChanged() error {
	if err := p.d.drv.MemsetD32Async(p.count.ptr, 0, 2, p.stream); err != nil {
		return err
	}
	status := cuda.DevicePtr(0)
	if c := &p.refs.cells; c.unchecked {
		status = c.status.ptr
	}
	return p.d.resident.runCountChanged(p.d.drv, p.stream, p.outIdx.ptr, p.prev.ptr, p.n(), p.count.ptr, status,
		p.d.info.Multiprocessors)
}

// downloadResults queues the changed count back, and with it the answers
// when want is set (else only the refined count).
func (p *residentPart) downloadResults(want bool) error {
	drv := p.d.drv
	if err := drv.MemcpyDtoHAsync(p.hostSmall.p, p.count.ptr, 8, p.stream); err != nil {
		return err
	}
	if want {
		return p.download(drv, p.n())
	}
	if err := drv.MemcpyDtoHAsync(unsafe.Add(p.hostSmall.p, 8), p.nflag.ptr, 4, p.stream); err != nil {
		return err
	}
	return drv.EventRecord(p.evOut, p.stream)
}

// takeAnswers makes the answers of the query just counted the previous
// ones, and the previous ones' memory the next query's answers (which
// every query writes whole): the columns swap places rather than one be
// copied into the other on the device. Replacements then mark the new
// previous column.
func (p *residentPart) takeAnswers() { p.outIdx, p.prev = p.prev, p.outIdx }

// collect waits for the part's queued query and reads its results: stage
// times into t, answers into out when want is set, and the changed count.
// Where the face cells' first level, queued unchecked, split or failed, the
// query answered nothing: the lists are built level by level and the query
// queued again.
func (p *residentPart) collect(s *gpuSession, out engine.Result, want bool, t *stageTimes) (int, error) {
	drv, m := p.d.drv, p.n()
	if err := drv.StreamSynchronize(p.stream); err != nil {
		return 0, err
	}
	if c := &p.refs.cells; c.unchecked {
		if !c.confirm() {
			if err := p.requery(s, want, t); err != nil {
				return 0, err
			}
		}
		t.note = c.note()
	}
	p.repQueued = false
	p.takeAnswers()
	spans := []eventSpan{{p.evStart, p.evStop, &t.kernel}, {p.evStop, p.evOut, &t.download}}
	if p.shape.G > 0 {
		spans = append(spans, eventSpan{p.evStart, p.evIndex, &t.index})
	}
	if err := elapsed(drv, spans); err != nil {
		return 0, err
	}
	t.refined += p.refined()
	if want {
		idx, dist := p.answers(m)
		index.ParallelCopy(out.Index[p.lo:p.hi], idx)
		index.ParallelCopy(out.Distance[p.lo:p.hi], dist)
	}
	return int(*(*uint64)(p.hostSmall.p)), nil
}
