package gpu

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/kernels"
	"github.com/geoknn/geoknn/internal/parallel"
	"github.com/geoknn/geoknn/internal/partition"
	"github.com/geoknn/geoknn/internal/trace"
)

// gpuRun is one streamed query's shared state across the device workers.
type gpuRun struct {
	req engine.Request
	// out receives the answers; fresh, when set, is the result being
	// allocated beside the query instead (answers).
	out   engine.Result
	fresh *freshResult
	refs  *index.RefSet
	grid  index.GridShape // the cells when the query runs the grid algorithm (g > 0)
	// tree, when the plan chose a k-d tree: grid then only orders the
	// observations.
	tree *index.PackedTree
	// cellsSide, when the plan allows the face-cell query: its cells a
	// face edge. Each GPU builds the lists from the references' grid index
	// of shape cellsGrid (the query's grid, or with a k-d tree the grid
	// the tree beat), or answers through the plan's index where they
	// cannot be made.
	cellsSide int
	cellsGrid index.GridShape
	queue     *partition.Queue
	n         int
	// direct: out lives in the engine's page-locked memory, and jobs copy
	// their answers straight into it; directIn: so do the observations'
	// columns, which jobs copy in straight from there.
	direct, directIn bool
	// host holds the engine's page-locked ranges those live in.
	host *hostAllocs
	// gpus is how many GPUs were open when the query began: each one's
	// crew of host goroutines is its share of the cores.
	gpus int

	mu   sync.Mutex
	done int
}

// answers is the run's result: the caller's, or a plain call's fresh one.
func (r *gpuRun) answers() engine.Result {
	if r.fresh != nil {
		return r.fresh.out
	}
	return r.out
}

// freshResult is a result allocated for the query that fills it, without
// the runtime clearing it (parallel.Uncleared: the job loop writes every answer);
// its pages are backed by the kernel on every core (parallel.Populate)
// while the GPUs take the observations and run their kernels, so that the
// crews' copies from the staging seldom fault.
type freshResult struct {
	out       engine.Result
	populated func()
}

// allocateResult allocates a result of n answers and starts backing its
// pages.
func allocateResult(n int) *freshResult {
	out := engine.Result{Index: parallel.Uncleared[uint32](n), Distance: parallel.Uncleared[float32](n)}
	wi, wd := parallel.Populate(out.Index), parallel.Populate(out.Distance)
	return &freshResult{out: out, populated: func() { wi(); wd() }}
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

// plan is how the run's jobs are ranked.
func (r *gpuRun) plan() rankPlan {
	p := rankPlan{algo: r.req.Algorithm, shape: r.grid, tree: r.tree != nil, prec: prec(r.req.Obs.Is32()), nref: r.refs.N}
	if p.algo == engine.Seed {
		p.nref = r.req.Ref.Len()
	}
	return p
}

// seedRefs is what the seed port reads of the references: the original
// columns in the observations' precision (none for the exact kernels).
func (r *gpuRun) seedRefs() index.Points {
	ref := r.req.Ref
	switch {
	case r.req.Algorithm != engine.Seed:
		return index.Points{}
	case ref.Gen == nil && ref.Is32() == r.req.Obs.Is32():
		return ref
	}
	return inPrecision(ref, r.req.Obs.Is32())
}

// inPrecision returns p's points as columns of the given precision
// (whatever form p has: columns of either precision, or a generated set).
func inPrecision(p index.Points, is32 bool) index.Points {
	n := p.Len()
	if is32 {
		lat, lon := make([]float32, n), make([]float32, n)
		for i := range lat {
			a, b := p.At(i)
			lat[i], lon[i] = float32(a), float32(b)
		}
		return index.Radians32(lat, lon)
	}
	lat, lon := make([]float64, n), make([]float64, n)
	for i := range lat {
		lat[i], lon[i] = p.At(i)
	}
	return index.Radians64(lat, lon)
}

// work runs jobs from the queue on this device until none is left, with
// slotsPerGPU jobs in flight (the job loop: jobloop.go): while one slot's
// kernels run, another's answers are copied out and a third's inputs
// copied in, and the host's copies into and out of the staging run on the
// GPU's crew beside them. It adds the device's stage times to t.
func (d *gpuDevice) work(ctx context.Context, w int, run *gpuRun, batch int, t *stageTimes) error {
	// Leave no work in flight on any return path: a failed start or index
	// build may have queued copies and kernels on a slot's stream.
	defer d.drainSlots()
	if err := d.startClock(run.req.Trace); err != nil {
		return err
	}
	track := fmt.Sprintf("host: GPU %d", d.info.Ordinal)
	end := run.req.Trace.Begin(track, "references")
	after, err := d.prepareRefs(run)
	end()
	if err != nil {
		return err
	}
	if run.cellsSide > 0 {
		t.note = d.refs.cells.note()
	}
	cfg := slotConfig{batch: batch, is32: run.req.Obs.Is32(), managed: d.memory == ManagedMemory, dev: d.dev,
		partials: max(batch, d.minPartials()), grid: run.grid,
		stageIn: run.req.Obs.Gen == nil && !run.directIn, stageOut: !run.direct}
	if run.req.Algorithm == engine.Seed {
		cfg.partials = max(cfg.partials, batch*kernels.SeedWidth)
	}
	end = run.req.Trace.Begin(track, "slot buffers")
	for _, s := range d.slots {
		if err := s.ensure(d.drv, cfg); err != nil {
			return err
		}
	}
	end()
	j := &slotJobs{kind: nearestKind{run}, obs: run.req.Obs, trc: run.req.Trace, host: run.host, t: t, after: after,
		refined: run.req.Algorithm != engine.Seed, progress: run.progress}
	if err := d.runSlotJobs(ctx, j, slotsPerGPU, crewWorkers(run.gpus), queueJobs(run.queue, w)); err != nil {
		return err
	}
	return d.indexTime(run, t)
}

// prepareRefs sends the run's references on the first slot's stream and
// builds the grid index there (or sends the k-d tree); it returns the event the first job's kernels
// wait for (0 when they need none).
func (d *gpuDevice) prepareRefs(run *gpuRun) (cuda.Event, error) {
	stream := d.slots[0].stream
	d.refs.cells.side = 0
	stage := func() error { return d.refs.stage(d.drv, stream, run.refs, run.seedRefs()) }
	if run.req.Prepared != nil && run.req.Algorithm != engine.Seed {
		stage = func() error { return d.refs.stagePrepared(d.drv, stream, run.refs, true) }
	}
	if err := stage(); err != nil {
		return 0, fmt.Errorf("uploading references: %w", err)
	}
	if run.grid.G == 0 {
		return 0, nil
	}
	if err := d.drv.EventRecord(d.evIdx0, stream); err != nil {
		return 0, err
	}
	if run.tree != nil {
		if err := d.refs.ensureTree(d.drv, run.tree, run.refs); err != nil {
			return 0, fmt.Errorf("uploading the k-d tree: %w", err)
		}
	}
	index := run.grid // the references' grid index: the query's, or the one the face cells are built from
	if run.tree != nil {
		index = run.cellsGrid
	}
	if index.G > 0 {
		if err := d.refs.ensureGrid(d.drv, d.grid, stream, index, run.refs); err != nil {
			return 0, fmt.Errorf("building the grid index: %w", err)
		}
	}
	if run.cellsSide > 0 {
		if err := d.refs.ensureCells(d.drv, d.cells, stream, index, run.refs, run.cellsSide); err != nil {
			return 0, fmt.Errorf("building the face cells: %w", err)
		}
	}
	return d.evIdx1, d.drv.EventRecord(d.evIdx1, stream)
}

// slotsPerGPU is how many jobs a GPU has in flight: one copying in, one
// running its kernels, one copying out, so that the host's work on a
// slot (staging the next job's points, copying answers back) runs while
// the GPU works on the others.
const slotsPerGPU = 3

// indexTime adds the index build's device time to t.
func (d *gpuDevice) indexTime(run *gpuRun, t *stageTimes) error {
	if run.grid.G == 0 {
		return nil
	}
	if err := d.drv.StreamSynchronize(d.slots[0].stream); err != nil {
		return err
	}
	var idx time.Duration
	if err := elapsed(d.drv, []eventSpan{{d.evIdx0, d.evIdx1, &idx}}); err != nil {
		return err
	}
	t.index += idx
	t.kernel += idx
	return nil
}

// drainSlots waits for whatever the slots still have in flight.
func (d *gpuDevice) drainSlots() {
	for _, s := range d.slots {
		d.drv.StreamSynchronize(s.stream)
	}
}

// slotConfig is what a slot's buffers are sized for.
type slotConfig struct {
	batch    int // observations per job
	partials int // (observation, slice) entries of partial results
	is32     bool
	managed  bool
	grid     index.GridShape // g > 0: grid scratch for this shape
	dev      cuda.Device
	// stageIn and stageOut: the jobs' observations and answers pass
	// through pinned staging (not for generated observations, nor for
	// answers copied straight into a caller's page-locked result).
	stageIn, stageOut bool
}

func (c slotConfig) elem() int {
	if c.is32 {
		return 4
	}
	return 8
}

// slot is one streamed job in flight on a GPU: a query (stream, events,
// device buffers, answer staging) plus the pinned staging of the job's
// observations.
type slot struct {
	*gpuQuery
	nb     neighbourBufs // k-nearest and radius jobs (neighbours.go)
	cfg    slotConfig
	hostIn pinnedHost
	// copies take the answers of the slot's job on from its staging into
	// the result, where download lists them (neighbours.go).
	copies []hostCopy
	track  string // the slot's track in a trace: "GPU 0 slot 1"
}

func newSlot(drv *cuda.Driver) (*slot, error) {
	q, err := newGPUQuery(drv)
	if err != nil {
		return nil, err
	}
	return &slot{gpuQuery: q}, nil
}

func (s *slot) ensure(drv *cuda.Driver, cfg slotConfig) error {
	s.cfg = cfg
	in := cfg.batch * cfg.elem()
	err := ensureAll(drv, []alloc{{&s.lat, in, cfg.managed}, {&s.lon, in, cfg.managed},
		{&s.outIdx, 4 * cfg.batch, cfg.managed}, {&s.outDist, 4 * cfg.batch, cfg.managed}}, cfg.dev)
	if err != nil {
		return err
	}
	if err := s.ensureRanking(drv, cfg.batch, cfg.grid, cfg.partials); err != nil {
		return err
	}
	if cfg.managed {
		return nil
	}
	if cfg.stageIn {
		if err := s.hostIn.ensure(drv, 2*in); err != nil {
			return fmt.Errorf("pinning %d MiB of host memory: %w", 2*in>>20, err)
		}
	}
	if !cfg.stageOut {
		return nil
	}
	return s.hostOut.ensure(drv, 8*cfg.batch)
}

func (s *slot) free(drv *cuda.Driver) error {
	return errors.Join(s.gpuQuery.free(drv), s.hostIn.free(drv), s.nb.free(drv))
}

// nearestKind is the nearest query's part of the job loop (queryKind).
type nearestKind struct{ run *gpuRun }

// kernels ranks the job: the face cells' lists over the columns, or the
// observations sorted by cell for the grid or k-d tree query, or brute
// force.
func (k nearestKind) kernels(d *gpuDevice, s *slot, job partition.Job) error {
	m := job.Len()
	p := k.run.plan()
	p.cells = d.refs.cells.side
	if p.shape.G > 0 && p.cells == 0 {
		if err := s.sortByCell(d, m, p, true, 0); err != nil {
			return err
		}
	}
	return s.rank(d, m, &d.refs, p)
}

// stages reports whether the job's observations go through the pinned
// staging: those the device checks (not generated, not managed) unless
// they are in the caller's page-locked memory.
func (s *slot) stages(obs index.Points) bool {
	return s.checksOnDevice(obs) && s.cfg.stageIn
}

// checksOnDevice reports whether the jobs' observations, obs's, are
// checked on the device once copied in (valid.go): all but generated ones
// and those written into managed memory, which the host checks.
func (s *slot) checksOnDevice(obs index.Points) bool {
	return obs.Gen == nil && !s.cfg.managed
}

// upload puts the job's observations on the device after evIn's record:
// made there (a generated set), copied in from the pinned staging (stage
// filled it) or straight from the caller's page-locked columns, or
// written into managed memory and prefetched.
func (s *slot) upload(d *gpuDevice, obs index.Points, h *hostAllocs) error {
	drv, m := d.drv, obs.Len()
	if m > s.cfg.batch {
		return fmt.Errorf("job of %d observations exceeds the slot's %d", m, s.cfg.batch)
	}
	if obs.Gen != nil {
		return s.generate(d, *obs.Gen)
	}
	if s.cfg.managed {
		return s.uploadManaged(drv, obs)
	}
	if !s.cfg.stageIn {
		return s.uploadDirect(drv, h, obs)
	}
	elem := s.cfg.elem()
	if err := drv.EventRecord(s.evIn, s.stream); err != nil {
		return err
	}
	if err := drv.MemcpyHtoDAsync(s.lat.ptr, s.hostIn.p, uint64(m*elem), s.stream); err != nil {
		return err
	}
	return drv.MemcpyHtoDAsync(s.lon.ptr, unsafe.Add(s.hostIn.p, m*elem), uint64(m*elem), s.stream)
}

// uploadDirect copies the job's observations in from the caller's
// page-locked columns.
func (s *slot) uploadDirect(drv *cuda.Driver, h *hostAllocs, obs index.Points) error {
	m, elem := obs.Len(), s.cfg.elem()
	lat, lon := unsafe.Pointer(unsafe.SliceData(obs.Lat64)), unsafe.Pointer(unsafe.SliceData(obs.Lon64))
	if obs.Is32() {
		lat, lon = unsafe.Pointer(unsafe.SliceData(obs.Lat32)), unsafe.Pointer(unsafe.SliceData(obs.Lon32))
	}
	if err := drv.EventRecord(s.evIn, s.stream); err != nil {
		return err
	}
	if err := copyIn(drv, h, s.lat.ptr, lat, m*elem, s.stream); err != nil {
		return err
	}
	return copyIn(drv, h, s.lon.ptr, lon, m*elem, s.stream)
}

// generate makes the job's generated observations in the device columns.
func (s *slot) generate(d *gpuDevice, g index.Generated) error {
	if err := d.drv.EventRecord(s.evIn, s.stream); err != nil {
		return err
	}
	if s.cfg.managed {
		err := prefetchAll(d.drv, s.stream, s.cfg.dev, []alloc{{buf: &s.outIdx, bytes: 4 * g.N}, {buf: &s.outDist, bytes: 4 * g.N}})
		if err != nil {
			return err
		}
	}
	return d.generate.run(d.drv, s.stream, g, s.lat.ptr, s.lon.ptr)
}

func (s *slot) uploadManaged(drv *cuda.Driver, obs index.Points) error {
	m, elem := obs.Len(), s.cfg.elem()
	// Bring the pages home in bulk before the host writes them, rather
	// than faulting them back one by one.
	for _, b := range []*buffer{&s.lat, &s.lon} {
		if err := drv.MemPrefetch(b.ptr, uint64(m*elem), cuda.CPUDevice, s.stream); err != nil {
			return err
		}
	}
	if err := drv.StreamSynchronize(s.stream); err != nil {
		return err
	}
	if err := drv.EventRecord(s.evIn, s.stream); err != nil {
		return err
	}
	if obs.Is32() {
		index.ParallelCopy(hostView[float32](&s.lat, m), obs.Lat32)
		index.ParallelCopy(hostView[float32](&s.lon, m), obs.Lon32)
	} else {
		index.ParallelCopy(hostView[float64](&s.lat, m), obs.Lat64)
		index.ParallelCopy(hostView[float64](&s.lon, m), obs.Lon64)
	}
	return prefetchAll(drv, s.stream, s.cfg.dev, []alloc{{buf: &s.lat, bytes: m * elem}, {buf: &s.lon, bytes: m * elem},
		{buf: &s.outIdx, bytes: 4 * m}, {buf: &s.outDist, bytes: 4 * m}})
}

// prefetchAll queues the prefetch of each managed buffer's first bytes to
// dev (cuda.CPUDevice: to the host).
func prefetchAll(drv *cuda.Driver, stream cuda.Stream, dev cuda.Device, bufs []alloc) error {
	for _, b := range bufs {
		if err := drv.MemPrefetch(b.buf.ptr, uint64(b.bytes), dev, stream); err != nil {
			return err
		}
	}
	return nil
}

// download queues the answers' way back: straight into the caller's
// page-locked result, into the pinned staging, or (managed memory)
// prefetched to the host, with the refined count.
func (k nearestKind) download(d *gpuDevice, s *slot, job partition.Job) error {
	drv, run, m := d.drv, k.run, job.Len()
	if run.direct {
		return s.downloadTo(drv, run.host, m, unsafe.Pointer(&run.out.Index[job.Start]), unsafe.Pointer(&run.out.Distance[job.Start]))
	}
	if !s.cfg.managed {
		return s.download(drv, m)
	}
	if err := drv.MemcpyDtoHAsync(unsafe.Add(s.hostSmall.p, 8), s.nflag.ptr, 4, s.stream); err != nil {
		return err
	}
	err := prefetchAll(drv, s.stream, cuda.CPUDevice, []alloc{{buf: &s.outIdx, bytes: 4 * m}, {buf: &s.outDist, bytes: 4 * m}})
	if err != nil {
		return err
	}
	return drv.EventRecord(s.evOut, s.stream)
}

// copies take the job's answers from the staging (managed memory: the
// answer buffers, back on the host) into the result, once it is
// allocated; none when they were copied straight into it.
func (k nearestKind) copies(s *slot, job partition.Job) []hostCopy {
	if k.run.direct {
		return nil
	}
	out, m := k.run.answers(), job.Len()
	idx, dist := unsafe.Pointer(&out.Index[job.Start]), unsafe.Pointer(&out.Distance[job.Start])
	if s.cfg.managed {
		return []hostCopy{{idx, devicePtrToPointer(s.outIdx.ptr), 4 * m}, {dist, devicePtrToPointer(s.outDist.ptr), 4 * m}}
	}
	return []hostCopy{{idx, s.hostOut.p, 4 * m}, {dist, unsafe.Add(s.hostOut.p, 4*m), 4 * m}}
}

// startClock, when the query is traced, records the device's clock event
// and notes when the host saw it reached.
func (d *gpuDevice) startClock(trc *trace.Recorder) error {
	if trc == nil {
		return nil
	}
	stream := d.slots[0].stream
	if err := d.drv.EventRecord(d.evClock, stream); err != nil {
		return err
	}
	if err := d.drv.StreamSynchronize(stream); err != nil {
		return err
	}
	d.clockAt = time.Now()
	return nil
}

// traceDevice adds the finished job's copy in, kernels and copy out to the
// trace, on the slot's track and the host's clock.
func (s *slot) traceDevice(d *gpuDevice, trc *trace.Recorder) error {
	if trc == nil {
		return nil
	}
	drv := d.drv
	for _, st := range []struct {
		name     string
		from, to cuda.Event
	}{{"copy in", s.evIn, s.evCopied}, {"kernels", s.evStart, s.evStop}, {"copy out", s.evStop, s.evOut}} {
		at, err := drv.EventElapsed(d.evClock, st.from)
		if err != nil {
			return err
		}
		dur, err := drv.EventElapsed(st.from, st.to)
		if err != nil {
			return err
		}
		trc.Add(s.track, st.name, d.clockAt.Add(at), dur)
	}
	return nil
}
