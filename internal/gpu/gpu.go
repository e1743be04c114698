package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/kernels"
	"github.com/geoknn/geoknn/internal/partition"
	"github.com/geoknn/geoknn/internal/trace"
)

// ErrNoGPU is returned by NewGPU when the driver loads but no usable GPU is
// present. errors.Is(err, cuda.ErrNoDriver) tells the no-driver case.
var ErrNoGPU = errors.New("no CUDA GPU found")

// GPUOptions configures NewGPU.
type GPUOptions struct {
	// Devices is the number of GPUs to use, 0 for all from First on.
	Devices int
	// First is the ordinal of the first GPU to use, modulo the GPUs
	// present (processes beyond the GPUs share them: an MPI rank a GPU).
	First  int
	Memory MemoryMode
	// Trace, if set, receives the start's stages: the driver, then each
	// GPU's context and modules.
	Trace *trace.Recorder
}

// The GPU engine offers every optional engine interface: the root package
// finds them by assertion, so a renamed method would silently turn pinning
// or the fast close off; these stop compiling instead.
var (
	_ engine.Engine       = (*GPU)(nil)
	_ engine.HostPinner   = (*GPU)(nil)
	_ engine.ExitCloser   = (*GPU)(nil)
	_ engine.KLimited     = (*GPU)(nil)
	_ engine.Expecter     = (*GPU)(nil)
	_ engine.FreshNearest = (*GPU)(nil)
)

// GPU is the exact engine on NVIDIA GPUs. One goroutine per GPU, locked to
// its OS thread with the GPU's primary context current, pulls jobs from its
// own queue and steals from the others' when it runs dry. Modules and
// buffers are kept between calls; Close releases them.
type GPU struct {
	// openRest opens the GPUs beyond the first; openOnce runs it once
	// (Close runs it in place of an open that never started).
	openRest func()
	openOnce sync.Once

	mu     sync.Mutex
	drv    *cuda.Driver
	memory MemoryMode
	devs   []*gpuDevice
	host   hostAllocs
	// sessions open on the engine: Close closes them before the devices,
	// so a session used or closed after its engine reports an error.
	sessions map[*gpuSession]struct{}
}

// NewGPU loads the CUDA driver, retains the primary context of each GPU and
// loads the kernels. Without a driver the error wraps cuda.ErrNoDriver;
// without a GPU it wraps ErrNoGPU.
func NewGPU(opts GPUOptions) (*GPU, error) {
	end := opts.Trace.Begin("host: engine", "load driver")
	drv, err := cuda.Load()
	end()
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
	if opts.First < 0 {
		return nil, fmt.Errorf("gpu engine: first GPU %d", opts.First)
	}
	first := opts.First % n
	if opts.Devices < 0 || opts.Devices > n-first {
		return nil, fmt.Errorf("gpu engine: %d GPUs asked for from GPU %d, %d present", opts.Devices, first, n)
	}
	n -= first
	if opts.Devices > 0 {
		n = opts.Devices
	}
	g := &GPU{drv: drv, memory: opts.Memory, devs: make([]*gpuDevice, n)}
	for i := range g.devs {
		d := &gpuDevice{drv: drv, ready: make(chan struct{})}
		if d.info, err = describe(drv, first+i); err != nil {
			return nil, fmt.Errorf("gpu engine: GPU %d: %w", first+i, err)
		}
		g.devs[i] = d
	}
	// The first GPU opens now. The others open behind it, one after
	// another, when a query is large enough to gain from them (or at once
	// when the caller asked for a number of GPUs), and join queries as they
	// become ready (onDevices). Contexts opened side by side slow each
	// other down in the driver (on 2 x H200, 220 ms each against 132 ms
	// alone), and a query that ends before a second GPU is ready would
	// only wait for it or be slowed by its opening.
	g.openRest = func() {
		for i, d := range g.devs[1:] {
			d.openOn(first+1+i, opts)
		}
	}
	if err := g.devs[0].openOn(first, opts); err != nil {
		g.Close()
		return nil, err
	}
	if opts.Devices > 1 {
		g.openOthers()
	}
	return g, nil
}

// openOthers starts opening the GPUs beyond the first, once.
func (g *GPU) openOthers() {
	g.openOnce.Do(func() { go g.openRest() })
}

// Expect tells the engine that queries over n observations, k answers
// each, are coming (a stream of chunks, each too small to open a GPU for):
// when all of them together gain from every GPU, the others start opening
// now, behind the first.
func (g *GPU) Expect(n, k int) {
	if moreGPUsWorth(n, max(k, 1), 0, false) {
		g.openOthers()
	}
}

// Costs of the model that decides whether a query opens the GPUs beyond
// the first (moreGPUsWorth), measured on 2 x H200: a query's answers come
// back to the host's memory at about 20 GB/s of a GPU, staging copy
// included; brute force ranks about 4e12 pairs a second on one GPU; and a
// GPU opens in 0.15-0.3 s, which the query must outlast to gain from it.
const (
	answerBytesPerSecond = 20e9
	brutePairsPerSecond  = 4e12
	openWorthSeconds     = 0.25
)

// moreGPUsWorth reports whether a query of n observations with k answers
// each (brute: every pair of nref references ranked) would run on one GPU
// long enough that the others, opened now, would shorten it.
func moreGPUsWorth(n, k, nref int, brute bool) bool {
	secs := float64(n) * float64(k) * 8 / answerBytesPerSecond
	if brute {
		secs += float64(n) * float64(nref) / brutePairsPerSecond
	}
	return secs > openWorthSeconds
}

// openOn opens the device as GPU ordinal on a thread of its own, records
// the outcome and marks the device ready (opened or failed).
func (d *gpuDevice) openOn(ordinal int, opts GPUOptions) error {
	defer close(d.ready)
	defer opts.Trace.Begin(fmt.Sprintf("host: GPU %d", ordinal), "open GPU")()
	if err := d.onThread(func() error { return d.open(ordinal, opts.Memory, opts.Trace) }); err != nil {
		d.openErr = fmt.Errorf("gpu engine: GPU %d: %w", ordinal, err)
	}
	return d.openErr
}

// Devices describes the GPUs in use.
func (g *GPU) Devices() []DeviceInfo {
	infos := make([]DeviceInfo, len(g.devs))
	for i, d := range g.devs {
		infos[i] = d.info
	}
	return infos
}

// Close frees every buffer and releases the contexts (after the GPUs
// still opening have opened).
func (g *GPU) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	var errs []error
	for s := range g.sessions {
		errs = append(errs, s.closeLocked())
	}
	g.openOnce.Do(func() { // never opened: nothing to wait for
		for _, d := range g.devs[min(1, len(g.devs)):] {
			close(d.ready)
		}
	})
	for _, d := range g.devs {
		<-d.ready
	}
	if len(g.devs) > 0 && g.devs[0].ctx != 0 {
		errs = append(errs, g.devs[0].onThread(func() error { return g.host.freeAll(g.drv) }))
	}
	for _, d := range g.devs {
		if d.ctx != 0 {
			errs = append(errs, d.onThread(d.close))
		}
	}
	g.devs = nil
	return errors.Join(errs...)
}

// CloseAtExit closes the engine for a process about to exit: every later
// call reports it closed, and the contexts, device memory and page-locked
// memory are left to the process's exit, which reclaims them at once
// (releasing them one by one took 76 ms for one H200 and 191 ms for two).
// A GPU still opening is not waited for. Nothing the caller owns is
// touched: answers already returned stay valid.
func (g *GPU) CloseAtExit() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.devs = nil
}

// readyDevs is the devices open now, in order; with an error when a GPU
// failed to open.
func (g *GPU) readyDevs() ([]*gpuDevice, error) {
	var devs []*gpuDevice
	for _, d := range g.devs {
		select {
		case <-d.ready:
			if d.openErr != nil {
				return nil, d.openErr
			}
			devs = append(devs, d)
		default:
		}
	}
	return devs, nil
}

// allDevs waits for every GPU to open (sessions place observations on all
// of them) and returns them.
func (g *GPU) allDevs() ([]*gpuDevice, error) {
	g.openOthers()
	for _, d := range g.devs {
		<-d.ready
		if d.openErr != nil {
			return nil, d.openErr
		}
	}
	return g.devs, nil
}

// Nearest answers req into out on every GPU of the engine.
func (g *GPU) Nearest(ctx context.Context, req engine.Request, out engine.Result) (engine.Stats, error) {
	start := time.Now()
	end := req.Trace.Begin("host", "check points")
	if err := engine.CheckRequest(req, out, false); err != nil {
		return engine.Stats{}, err
	}
	end()
	return g.nearest(ctx, req, out, nil, start)
}

// NearestFresh answers req into a result of its own (engine.FreshNearest),
// allocated beside the query's planning and first jobs: the plain call,
// whose new result would otherwise be zeroed and faulted in before the
// GPUs start.
func (g *GPU) NearestFresh(ctx context.Context, req engine.Request) (engine.Result, engine.Stats, error) {
	start := time.Now()
	end := req.Trace.Begin("host", "check points")
	if err := engine.CheckPoints(req, false); err != nil {
		return engine.Result{}, engine.Stats{}, err
	}
	end()
	fresh := allocateResult(req.Obs.Len())
	st, err := g.nearest(ctx, req, engine.Result{}, fresh, start)
	fresh.populated() // also on failure: no goroutine outlives the call
	if err != nil {
		return engine.Result{}, st, err
	}
	return fresh.out, st, nil
}

// nearest answers req on every GPU of the engine, into out, or into
// fresh when set (NearestFresh).
func (g *GPU) nearest(ctx context.Context, req engine.Request, out engine.Result, fresh *freshResult, start time.Time) (engine.Stats, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.devs) == 0 {
		return engine.Stats{}, errors.New("gpu engine: closed")
	}
	run, note := newGPURun(req, out)
	run.fresh = fresh
	if moreGPUsWorth(run.n, 1, run.refs.N, run.req.Algorithm != engine.Grid) {
		g.openOthers()
	}
	ready, err := g.readyDevs()
	if err != nil {
		return engine.Stats{}, err
	}
	run.host, run.gpus = &g.host, len(ready)
	run.direct = g.memory != ManagedMemory && fresh == nil && g.pinnedOut(run.out)
	run.directIn = g.memory != ManagedMemory && g.pinnedIn(req.Obs)
	batch := g.batchSize(run, ready)
	jobs, times, used, err := g.runJobs(ctx, run, batch)
	// Out of memory (a GPU shared with other work): smaller jobs, from the
	// start, with the buffers of the larger ones freed; every answer is
	// rewritten, so a retry answers exactly as a first run would.
	for retry := 0; cuda.IsOutOfMemory(err) && retry < 4 && batch > minRetryBatch && req.BatchSize == 0; retry++ {
		g.releaseBuffers()
		batch /= 2
		run.done = 0
		jobs, times, used, err = g.runJobs(ctx, run, batch)
	}
	var bad engine.BadInput
	if errors.As(err, &bad) {
		// Jobs run out of order: name the first bad point of the whole set.
		if first := req.Obs.CheckValues("observations", 0); first != nil {
			return engine.Stats{}, first
		}
		return engine.Stats{}, bad.Unwrap()
	}
	if err != nil {
		return engine.Stats{}, fmt.Errorf("gpu engine: %w", err)
	}
	st := engine.Stats{Engine: "gpu", Jobs: len(jobs), Wall: time.Since(start), Note: note}
	g.addDevices(&st, used, times)
	return st, nil
}

// addDevices adds the GPUs that took part (used) and their stage times to
// st.
func (g *GPU) addDevices(st *engine.Stats, used []bool, times []stageTimes) {
	for w, d := range g.devs {
		if used[w] {
			st.Devices = append(st.Devices, d.info.String())
			addDevice(st, times[w])
		}
	}
}

// minRetryBatch is the smallest job an out-of-memory retry goes down to.
const minRetryBatch = 1 << 16

// runJobs splits the run into jobs of batch and runs them on every GPU
// open, and on those still opening that open before the jobs run out;
// used tells which GPUs took part.
func (g *GPU) runJobs(ctx context.Context, run *gpuRun, batch int) ([]partition.Job, []stageTimes, []bool, error) {
	jobs, err := partition.Split(run.n, batch)
	if err != nil {
		return nil, nil, nil, err
	}
	run.queue = partition.NewQueue(jobs, len(g.devs))
	times := make([]stageTimes, len(g.devs))
	used, err := g.onDevices(ctx, run.queue, func(ctx context.Context, w int) error {
		return g.devs[w].work(ctx, w, run, batch, &times[w])
	})
	return jobs, times, used, err
}

// onDevices runs fn(ctx, w) on every GPU w open now, each on its device's
// thread, and on every GPU still opening once it opens, if queue still
// holds jobs by then: the GPUs open early never wait for the late ones, so
// a second GPU speeds a query up or takes no part. The first error
// cancels ctx for the others and comes back naming its GPU; used tells
// which GPUs ran fn.
func (g *GPU) onDevices(ctx context.Context, queue *partition.Queue, fn func(ctx context.Context, w int) error) ([]bool, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var first error
	var once sync.Once
	used := make([]bool, len(g.devs))
	run := func(w int) {
		used[w] = true
		if err := g.devs[w].onThread(func() error { return fn(ctx, w) }); err != nil {
			d := g.devs[w]
			once.Do(func() { first = fmt.Errorf("GPU %d (%s): %w", d.info.Ordinal, d.info.Name, err); cancel() })
		}
	}
	stop := make(chan struct{})
	var early, late sync.WaitGroup
	for w, d := range g.devs {
		select {
		case <-d.ready:
			if d.openErr != nil {
				continue // readyDevs reported it; a query that began before sees it next time
			}
			early.Add(1)
			go func() { defer early.Done(); run(w) }()
		default:
			late.Add(1)
			go func() {
				defer late.Done()
				select {
				case <-d.ready:
				case <-stop:
					return
				}
				if d.openErr == nil && queue.Left() > 0 && ctx.Err() == nil {
					run(w)
				}
			}()
		}
	}
	early.Wait()
	close(stop)
	late.Wait()
	return used, first
}

// releaseBuffers frees every GPU's job and reference buffers, which grow on
// demand again: after an out-of-memory error, smaller jobs get what the
// larger ones held.
func (g *GPU) releaseBuffers() {
	ready, _ := g.readyDevs()
	for _, d := range ready {
		d.onThread(func() error {
			var errs []error
			for _, s := range d.slots {
				for _, b := range s.buffers() {
					errs = append(errs, b.free(d.drv))
				}
				errs = append(errs, s.nb.free(d.drv))
			}
			return errors.Join(append(errs, d.refs.free(d.drv))...)
		})
	}
}

// PlanAhead plans a nearest query like req (req.Obs a sample of its
// observations) as the engine's query would, and keeps the plan with
// req's prepared references, where the query finds it and only
// resamples it: a stream answered on the CPU while the GPUs open has its
// first GPU chunk wait 80-100 ms for the plan otherwise (135,233 cities,
// one H200). Host work only; it does nothing for other algorithms or
// without prepared references.
func PlanAhead(req engine.Request) {
	if req.Algorithm != engine.Grid || req.Prepared == nil {
		return
	}
	req.Trace = nil // beside the queries, on no track of theirs
	newGPURun(req, engine.Result{})
}

// newGPURun prepares the references of req and plans its algorithm: the
// grid's cells, the k-d tree where no grid suits the references, or brute
// force when the plan says it is cheaper (the note says which, and why).
func newGPURun(req engine.Request, out engine.Result) (*gpuRun, string) {
	end := req.Trace.Begin("host", "prepare references")
	run := &gpuRun{req: req, out: out, refs: req.Merged(), n: req.Obs.Len()}
	end()
	if req.Algorithm != engine.Grid {
		return run, ""
	}
	defer req.Trace.Begin("host", "plan")()
	plans := req.Plans()
	plan := plans.Plan(req.Obs, run.refs, index.GPUGridCost, req.GridSide, req.MergedTree())
	if plan.Tree != nil {
		if tree, err := plans.Packed(plan.Tree); err == nil {
			run.tree, run.grid = tree, index.NewGridShape(treeSortSide)
			run.cellsGrid, run.cellsSide = index.NewGridShape(index.CellsGridSide(run.refs.N)), index.CellsSideFor(run.n, run.refs.N, true)
			return run, plan.Note()
		}
		plan = plans.Plan(req.Obs, run.refs, index.GPUSessionGridCost, req.GridSide, nil)
	}
	if plan.Index == nil {
		run.req.Algorithm = engine.Brute
		return run, "grid fell back to brute force: " + plan.Reason
	}
	run.grid = index.NewGridShape(plan.Index.G)
	if req.GridSide == 0 {
		run.cellsGrid, run.cellsSide = run.grid, index.CellsSideFor(run.n, run.refs.N, false)
	}
	return run, plan.Note()
}

// treeSortSide is the grid whose cells order the observations for the k-d
// tree query: cells small enough that a warp's observations lie close
// together and walk much the same path (about 50 of a 2^22 job a cell).
const treeSortSide = 128

// batchSize is the request's batch size, or one that fits every GPU's
// memory and splits the work evenly.
func (g *GPU) batchSize(run *gpuRun, ready []*gpuDevice) int {
	if run.req.BatchSize > 0 {
		return run.req.BatchSize
	}
	maxJob := math.MaxInt
	for _, d := range ready {
		maxJob = min(maxJob, d.maxJob(run.req.Obs.Is32(), run.refs.N, run.grid.G > 0))
	}
	return partition.BatchSize(run.n, len(g.devs), 8, 1<<20, maxJob, kernels.BlockMinThreads*kernels.BlockMinObs)
}

// onEach runs fn(ctx, k) for every device k at once, each on its device's
// thread; the first error cancels ctx for the others and comes back naming
// its GPU.
func onEach(ctx context.Context, devs []*gpuDevice, fn func(ctx context.Context, k int) error) error {
	eg, ectx := errgroup.WithContext(ctx)
	for k, d := range devs {
		eg.Go(func() error {
			return d.onThread(func() error {
				if err := fn(ectx, k); err != nil {
					return fmt.Errorf("GPU %d (%s): %w", d.info.Ordinal, d.info.Name, err)
				}
				return nil
			})
		})
	}
	return eg.Wait()
}
