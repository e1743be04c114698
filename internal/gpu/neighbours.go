package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
	"unsafe"

	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/kernels"
	"github.com/geoknn/geoknn/internal/parallel"
	"github.com/geoknn/geoknn/internal/partition"
)

// neighbourQuery is a k-nearest or radius query on the GPUs (knn.cu): the
// references with exact duplicates listed one by one, the cells (g = 1 for
// brute force), the fp64 squared-chord limit (chordLimit, as the CPU
// engine decides it) and where each job's answers go.
type neighbourQuery struct {
	req   engine.Request
	refs  *index.RefSet
	shape index.GridShape
	maxD2 float64
	// k nearest: k answers an observation into kOut. Otherwise within the
	// limit: counts, or, with offsets (row starts, n+1 of them), the rows
	// into index and chord (fp64 squared chords), ordered afterwards.
	k    int
	kOut engine.KResult
	// direct: kOut lives in the engine's page-locked memory (PinResult),
	// and jobs copy their answers straight into it.
	direct       bool
	host         *hostAllocs
	counts       []uint32
	offsets      []uint64
	index        []uint32
	chord        []float64
	maxJobChords int // listing: the most entries a job writes
}

// MaxK is the largest k KNearest answers (engine.KLimited): the kernels
// keep each observation's candidates in registers or local memory.
func (g *GPU) MaxK() int { return kernels.KnnMax }

// KNearest answers the out.K nearest references of every observation
// within maxRad radians on the GPUs (grid_knn; brute force is a grid of
// one cell), exactly as the CPU engine does; K above MaxK is refused (the
// caller answers it on the CPU engine: engines.KNearest).
func (g *GPU) KNearest(ctx context.Context, req engine.Request, maxRad float64, out engine.KResult) (engine.Stats, error) {
	start := time.Now()
	if err := engine.CheckK(req, maxRad, out); err != nil {
		return engine.Stats{}, err
	}
	if out.K > kernels.KnnMax {
		return engine.Stats{}, fmt.Errorf("k = %d: the GPU kernels answer k up to %d", out.K, kernels.KnnMax)
	}
	refs := req.All()
	q := &neighbourQuery{req: req, refs: refs, shape: neighbourShape(req, refs.N, max(2, float64(out.K)/2)),
		maxD2: index.ChordLimit(maxRad), k: out.K, kOut: out}
	q.direct, q.host = g.pinnedOut(engine.Result{Index: out.Index, Distance: out.Distance}), &g.host
	st, err := g.runNeighbours(ctx, q, start)
	st.Note = shapeNote(q.shape) // the query is the caller's to state, in metres
	return st, err
}

// Within answers, for every observation, the references within rad
// radians on the GPUs (grid_within): a counting pass, and with list a
// second that writes the rows, which the host orders.
func (g *GPU) Within(ctx context.Context, req engine.Request, rad float64, list bool) (engine.WithinResult, engine.Stats, error) {
	start := time.Now()
	if err := checkWithin(req, rad); err != nil {
		return engine.WithinResult{}, engine.Stats{}, err
	}
	n := req.Obs.Len()
	refs := req.All()
	q := &neighbourQuery{req: req, refs: refs, shape: neighbourShape(req, refs.N, 2), maxD2: index.ChordLimit(rad),
		counts: parallel.Written[uint32](n)} // every job writes its counts; a failed query's are dropped
	st, err := g.runNeighbours(ctx, q, start)
	if err != nil {
		return engine.WithinResult{}, st, err
	}
	res := engine.WithinResult{Counts: q.counts}
	if list {
		if err := q.prepareRows(); err != nil {
			return engine.WithinResult{}, st, err
		}
		lst, err := g.runNeighbours(ctx, q, start)
		if err != nil {
			return engine.WithinResult{}, lst, err
		}
		if lst.Refined > 0 {
			return engine.WithinResult{}, lst, fmt.Errorf("gpu engine: within: %d rows listed with other than their counted references (the GPU's two passes disagree); no answers returned", lst.Refined)
		}
		st = mergeStats(st, lst)
		res.Offsets, res.Index, res.Distance = q.offsets, q.index, q.orderRows()
	}
	st.Note = shapeNote(q.shape)
	return res, st, nil
}

func checkWithin(req engine.Request, rad float64) error {
	if err := engine.CheckPoints(req, true); err != nil {
		return err
	}
	if !(rad >= 0) || math.IsInf(rad, 1) {
		return fmt.Errorf("radius %v rad: want a finite distance, 0 or more", rad)
	}
	return nil
}

// neighbourShape is the request's cells: one for brute force (and the seed
// port, which has no k-nearest form), else the request's side or one of
// about perCell references a cell the sphere crosses.
func neighbourShape(req engine.Request, nref int, perCell float64) index.GridShape {
	switch {
	case req.Algorithm != engine.Grid:
		return index.NewGridShape(1)
	case req.GridSide > 0:
		return index.NewGridShape(index.CappedSide(req.GridSide, nref))
	}
	return index.NewGridShape(max(4, index.GridSide(nref, perCell)))
}

func shapeNote(s index.GridShape) string {
	if s.G == 1 {
		return "brute force"
	}
	return fmt.Sprintf("grid %d^3 cells", s.G)
}

// mergeStats adds a second pass's device times and jobs to the first's.
func mergeStats(a, b engine.Stats) engine.Stats {
	a.Kernel += b.Kernel
	a.Index += b.Index
	a.Upload += b.Upload
	a.Download += b.Download
	a.Refined += b.Refined
	a.Jobs += b.Jobs
	a.Wall = b.Wall
	return a
}

// prepareRows turns the counts into row offsets and makes room for the
// rows, refusing lists too large for the host's memory.
func (q *neighbourQuery) prepareRows() error {
	n := len(q.counts)
	q.offsets = make([]uint64, n+1)
	for i, c := range q.counts {
		q.offsets[i+1] = q.offsets[i] + uint64(c)
	}
	total := q.offsets[n]
	if total > 1<<34 {
		return fmt.Errorf("within: %d references found in all, more than 2^34: a smaller radius, or counts only", total)
	}
	// Every entry is copied from the device; a row the listing pass left
	// short fails the query (Within), so nothing uncleared is returned.
	q.index, q.chord = parallel.Written[uint32](int(total)), parallel.Written[float64](int(total))
	return nil
}

// orderRows sorts every row by distance, ties to the lower index, and
// returns the distances in radians, as the CPU engine computes them.
func (q *neighbourQuery) orderRows() []float32 {
	dist := parallel.Written[float32](len(q.index)) // every entry of every row below
	parallel.Blocks(len(q.counts), 1<<12, 0, func(_, lo, hi int) {
		var row []index.Neighbour
		for i := lo; i < hi; i++ {
			a, b := q.offsets[i], q.offsets[i+1]
			row = row[:0]
			for j := a; j < b; j++ {
				row = append(row, index.Neighbour{D2: q.chord[j], ID: q.index[j]})
			}
			slices.SortFunc(row, func(x, y index.Neighbour) int {
				if x.Before(y) {
					return -1
				}
				return 1
			})
			for j, nb := range row {
				q.index[a+uint64(j)], dist[a+uint64(j)] = nb.ID, float32(index.ChordToAngle(nb.D2))
			}
		}
	})
	q.chord = nil
	return dist
}

// runNeighbours runs q's jobs on every GPU.
func (g *GPU) runNeighbours(ctx context.Context, q *neighbourQuery, start time.Time) (engine.Stats, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.devs) == 0 {
		return engine.Stats{}, errors.New("gpu engine: closed")
	}
	if moreGPUsWorth(q.req.Obs.Len(), max(q.k, 1), q.refs.N, q.shape.G == 1) {
		g.openOthers()
	}
	ready, err := g.readyDevs()
	if err != nil {
		return engine.Stats{}, err
	}
	batch := q.batch(len(g.devs))
	jobs, err := q.jobs(batch)
	if err != nil {
		return engine.Stats{}, err
	}
	queue := partition.NewQueue(jobs, len(g.devs))
	times := make([]stageTimes, len(g.devs))
	workers := crewWorkers(len(ready))
	used, err := g.onDevices(ctx, queue, func(ctx context.Context, w int) error {
		return g.devs[w].neighbourJobs(ctx, w, q, queue, batch, workers, &times[w])
	})
	var bad engine.BadInput
	if errors.As(err, &bad) {
		if first := q.req.Obs.CheckValues("observations", 0); first != nil {
			return engine.Stats{}, first
		}
		return engine.Stats{}, bad.Unwrap()
	}
	if err != nil {
		return engine.Stats{}, fmt.Errorf("gpu engine: %w", err)
	}
	st := engine.Stats{Engine: "gpu", Jobs: len(jobs), Wall: time.Since(start)}
	g.addDevices(&st, used, times)
	return st, nil
}

// batch is the request's batch size, or the observations split evenly
// over the GPUs in jobs of at most 2^22 answers (2^22 / k observations, at
// least 2^16). The answers come back through pinned staging the size of a
// job's, and the GPUs copy into a small staging far faster than into a
// large one: on 2 x H200, k = 8 at 2^27, jobs of 2^22 observations (256 MB
// of staging a slot) copied out in 580 ms summed, jobs of 2^19 (32 MB) in
// 229 ms, with the same kernel time.
func (q *neighbourQuery) batch(gpus int) int {
	if q.req.BatchSize > 0 {
		return q.req.BatchSize
	}
	n := q.req.Obs.Len()
	most := max(1<<16, (1<<22)/max(q.k, 1))
	return max(1, min(most, (n+gpus-1)/gpus))
}

// jobs splits the observations into jobs of at most batch; when listing,
// also of at most 2^24 entries (or the longest row), so every job's rows
// fit the GPU and the pinned staging.
func (q *neighbourQuery) jobs(batch int) ([]partition.Job, error) {
	if q.offsets == nil {
		return partition.Split(q.req.Obs.Len(), batch)
	}
	most := uint64(1 << 24)
	for i := range q.counts {
		most = max(most, uint64(q.counts[i]))
	}
	var jobs []partition.Job
	n := len(q.counts)
	for lo := 0; lo < n; {
		hi := lo + 1
		for hi < n && hi-lo < batch && q.offsets[hi+1]-q.offsets[lo] <= most {
			hi++
		}
		jobs = append(jobs, partition.Job{Start: lo, End: hi})
		q.maxJobChords = max(q.maxJobChords, int(q.offsets[hi]-q.offsets[lo]))
		lo = hi
	}
	return jobs, nil
}

// neighbourSlots is how many jobs a GPU has in flight in a k-nearest or
// radius query: a job's answers (k an observation, or a radius list's
// rows) need more room than the nearest one's, on the device and in the
// pinned staging.
const neighbourSlots = 2

// neighbourJobs builds the index on this GPU, then runs jobs from the
// queue through the job loop (jobloop.go) on neighbourSlots slots, with a
// crew of workers host goroutines: while one job's kernels run, the
// answers of the one before are copied from pinned staging into the
// caller's memory and the next one's observations staged.
func (d *gpuDevice) neighbourJobs(ctx context.Context, w int, q *neighbourQuery, queue *partition.Queue, batch, workers int, t *stageTimes) error {
	defer d.drainSlots()
	if err := d.startClock(q.req.Trace); err != nil {
		return err
	}
	if err := d.neighbourIndex(d.slots[0].stream, q, t); err != nil {
		return err
	}
	for _, s := range d.slots[:neighbourSlots] {
		if err := d.ensureNeighbourBufs(s, q, batch); err != nil {
			return err
		}
	}
	j := &slotJobs{kind: neighbourKind{q}, obs: q.req.Obs, trc: q.req.Trace, t: t, refined: true}
	return d.runSlotJobs(ctx, j, neighbourSlots, workers, queueJobs(queue, w))
}

// neighbourIndex sends the references and builds their index on stream,
// and waits for it.
func (d *gpuDevice) neighbourIndex(stream cuda.Stream, q *neighbourQuery, t *stageTimes) error {
	if err := d.refs.stagePrepared(d.drv, stream, q.refs, q.req.Prepared != nil); err != nil {
		return fmt.Errorf("uploading references: %w", err)
	}
	if err := d.drv.EventRecord(d.evIdx0, stream); err != nil {
		return err
	}
	if err := d.refs.ensureGrid(d.drv, d.grid, stream, q.shape, q.refs); err != nil {
		return fmt.Errorf("building the grid index: %w", err)
	}
	if err := d.drv.EventRecord(d.evIdx1, stream); err != nil {
		return err
	}
	if err := d.drv.StreamSynchronize(stream); err != nil {
		return err
	}
	var idx time.Duration
	err := elapsed(d.drv, []eventSpan{{d.evIdx0, d.evIdx1, &idx}})
	t.index += idx
	t.kernel += idx
	return err
}

// neighbourBufs are a slot's k-nearest and radius state: the rows of a
// radius listing on the device.
type neighbourBufs struct {
	offsets, index, chord buffer
}

func (b *neighbourBufs) free(drv *cuda.Driver) error {
	return errors.Join(b.offsets.free(drv), b.index.free(drv), b.chord.free(drv))
}

// ensureNeighbourBufs sizes the slot for jobs of batch and q's answers.
func (d *gpuDevice) ensureNeighbourBufs(s *slot, q *neighbourQuery, batch int) error {
	cfg := slotConfig{batch: batch, is32: q.req.Obs.Is32(), dev: d.dev, partials: 1, grid: q.shape,
		stageIn: q.req.Obs.Gen == nil}
	if err := s.ensure(d.drv, cfg); err != nil {
		return err
	}
	per := max(q.k, 1)
	allocs := []alloc{{buf: &s.outIdx, bytes: 4 * per * batch}, {buf: &s.outDist, bytes: 4 * per * batch}}
	if q.offsets != nil {
		allocs = append(allocs, alloc{buf: &s.nb.offsets, bytes: 8 * (batch + 1)},
			alloc{buf: &s.nb.index, bytes: 4 * max(q.maxJobChords, 1)}, alloc{buf: &s.nb.chord, bytes: 8 * max(q.maxJobChords, 1)})
	}
	return ensureAll(d.drv, allocs, 0)
}

// neighbourKind is the k-nearest and radius queries' part of the job
// loop (queryKind).
type neighbourKind struct{ q *neighbourQuery }

// kernels sorts the job's observations by cell and queues grid_knn or
// grid_within over them.
func (k neighbourKind) kernels(d *gpuDevice, s *slot, job partition.Job) error {
	p := rankPlan{shape: k.q.shape, prec: prec(k.q.req.Obs.Is32())}
	if err := s.sortByCell(d, job.Len(), p, true, 0); err != nil {
		return err
	}
	if err := d.drv.MemsetD32Async(s.nflag.ptr, 0, 1, s.stream); err != nil {
		return err
	}
	return d.neighbourKernel(s, k.q, job)
}

// download queues the copies of the job's answers and refined count.
func (k neighbourKind) download(d *gpuDevice, s *slot, job partition.Job) error {
	return d.neighbourDownload(s, k.q, job)
}

// copies are those download listed.
func (k neighbourKind) copies(s *slot, job partition.Job) []hostCopy { return s.copies }

// neighbourKernel queues the job's grid_knn or grid_within.
func (d *gpuDevice) neighbourKernel(s *slot, q *neighbourQuery, job partition.Job) error {
	ix := d.refs.gridIndex(s.sorted.ptr, job.Len(), q.shape)
	if q.k > 0 {
		return d.knn.runKNN(d.drv, s.stream, knnLaunch{gridIndexArgs: ix, k: q.k, maxD2: q.maxD2,
			outIdx: s.outIdx.ptr, outDist: s.outDist.ptr, refined: s.nflag.ptr})
	}
	l := withinLaunch{gridIndexArgs: ix, maxD2: q.maxD2, counts: s.outIdx.ptr}
	if q.offsets != nil {
		local := make([]uint64, job.Len()+1) // row starts and the end of the last
		for i := range local {
			local[i] = q.offsets[job.Start+i] - q.offsets[job.Start]
		}
		// From pageable memory: the driver has read it when this returns.
		if err := d.drv.MemcpyHtoDAsync(s.nb.offsets.ptr, unsafe.Pointer(&local[0]), uint64(8*len(local)), s.stream); err != nil {
			return err
		}
		// The rows listed other than counted are counted where the job's
		// refined count goes (zeroed above; grid_within refines nothing).
		l.offsets, l.counts, l.index, l.chord = s.nb.offsets.ptr, s.nflag.ptr, s.nb.index.ptr, s.nb.chord.ptr
	}
	return d.knn.runWithin(d.drv, s.stream, l)
}

// neighbourDownload queues the copies of the job's answers and its refined
// count into pinned memory, and notes where the answers belong.
func (d *gpuDevice) neighbourDownload(s *slot, q *neighbourQuery, job partition.Job) error {
	type part struct {
		dst   unsafe.Pointer
		src   cuda.DevicePtr
		bytes int
	}
	var parts []part
	switch m := job.Len(); {
	case q.k > 0 && q.direct:
		lo := job.Start * q.k
		s.copies = s.copies[:0]
		for _, p := range []part{{unsafe.Pointer(&q.kOut.Index[lo]), s.outIdx.ptr, 4 * m * q.k},
			{unsafe.Pointer(&q.kOut.Distance[lo]), s.outDist.ptr, 4 * m * q.k}} {
			if err := copyOut(d.drv, q.host, p.dst, p.src, p.bytes, s.stream); err != nil {
				return err
			}
		}
		return d.downloadRefined(s)
	case q.k > 0:
		lo := job.Start * q.k
		parts = []part{{unsafe.Pointer(&q.kOut.Index[lo]), s.outIdx.ptr, 4 * m * q.k},
			{unsafe.Pointer(&q.kOut.Distance[lo]), s.outDist.ptr, 4 * m * q.k}}
	case q.offsets == nil:
		parts = []part{{unsafe.Pointer(&q.counts[job.Start]), s.outIdx.ptr, 4 * m}}
	default:
		if a, b := q.offsets[job.Start], q.offsets[job.End]; a < b {
			parts = []part{{unsafe.Pointer(&q.index[a]), s.nb.index.ptr, 4 * int(b-a)},
				{unsafe.Pointer(&q.chord[a]), s.nb.chord.ptr, 8 * int(b-a)}}
		}
	}
	total := 0
	for _, p := range parts {
		total += align8(p.bytes)
	}
	if err := s.hostOut.ensure(d.drv, max(total, 8)); err != nil {
		return fmt.Errorf("pinning %d MiB of host memory: %w", total>>20, err)
	}
	s.copies = s.copies[:0]
	at := 0
	for _, p := range parts {
		if err := d.drv.MemcpyDtoHAsync(unsafe.Add(s.hostOut.p, at), p.src, uint64(p.bytes), s.stream); err != nil {
			return err
		}
		s.copies = append(s.copies, hostCopy{dst: p.dst, src: unsafe.Add(s.hostOut.p, at), bytes: p.bytes})
		at += align8(p.bytes)
	}
	return d.downloadRefined(s)
}

// downloadRefined queues the copy of the job's refined count and records
// the end of its copies out.
func (d *gpuDevice) downloadRefined(s *slot) error {
	if err := d.drv.MemcpyDtoHAsync(unsafe.Add(s.hostSmall.p, 8), s.nflag.ptr, 4, s.stream); err != nil {
		return err
	}
	return d.drv.EventRecord(s.evOut, s.stream)
}
