package geoknn

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/engines"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/parallel"
	"github.com/geoknn/geoknn/sphere"
)

// EarthRadiusMetres is the radius of the sphere every distance is measured
// on: the mean Earth radius (IUGG R1), sphere.EarthRadiusMetres.
const EarthRadiusMetres = sphere.EarthRadiusMetres

// MaxGridSide is the largest Options.GridSide: the grid index holds at
// most MaxGridSide^3 cells.
const MaxGridSide = index.MaxGridSide

// Engine selects where queries run.
type Engine int

const (
	// Auto uses the GPUs when a CUDA driver and GPU are present, else the CPU.
	Auto = Engine(engines.Auto)
	CPU  = Engine(engines.CPU)
	GPU  = Engine(engines.GPU)
)

func (e Engine) String() string {
	switch e {
	case CPU:
		return "cpu"
	case GPU:
		return "gpu"
	}
	return "auto"
}

// ParseEngine parses "auto", "cpu" or "gpu".
func ParseEngine(s string) (Engine, error) {
	switch strings.ToLower(s) {
	case "auto", "":
		return Auto, nil
	case "cpu":
		return CPU, nil
	case "gpu":
		return GPU, nil
	}
	return Auto, fmt.Errorf("unknown engine %q (want auto, cpu or gpu)", s)
}

// Options configures a Searcher. The zero value is ready to use: automatic
// engine, the exact grid search, all GPUs, automatic batch size.
type Options struct {
	Engine    Engine
	Algorithm Algorithm
	// GPUs is the number of GPUs to use; 0 means all from FirstGPU on.
	GPUs int
	// FirstGPU is the ordinal of the first GPU to use, modulo the GPUs
	// present (so that processes beyond the GPUs share them).
	FirstGPU int
	// BatchSize is the number of observations per job; 0 sizes jobs from
	// free GPU memory (or a cache-friendly size on the CPU).
	BatchSize int
	// GridSide fixes the grid's cells per axis (for benchmarks); 0 chooses
	// from a sample of the query.
	GridSide int
	Memory   MemoryMode
	// CPUWorkers is the number of goroutines of the CPU engine; 0 means
	// GOMAXPROCS.
	CPUWorkers int
	// Progress, if set, is called as jobs finish with the observations done.
	Progress func(done, total int)
	// Trace, if set, receives every query's stages.
	Trace *Trace
}

// Result holds one answer per observation, in input order.
type Result struct {
	Index       []uint32  // index of the nearest reference
	DistanceRad []float32 // great-circle angle to it, radians
	// Fallback explains why Auto chose the CPU, if it did.
	Fallback string
	// Stats says how the query ran: engine, devices, stage times.
	Stats Stats
}

// NewResult returns a Result with room for n answers, for NearestInto and
// Session.Nearest, its memory touched on every core: the first write to
// fresh memory costs a page fault (about 0.1 s a GiB on one core), which
// would otherwise land inside the query. Reuse it across queries; PinResult
// makes the GPUs copy answers straight into it.
func NewResult(n int) *Result {
	return &Result{Index: parallel.Touched[uint32](n), DistanceRad: parallel.Touched[float32](n)}
}

// PinResult page-locks r's slices for the searcher's GPUs (registers them
// with the driver, about 0.4 s a GiB), so that every query copies its
// answers straight into them with no staging copy on the host: worth it
// when r takes the answers of many queries (a simulation's steps). r must
// not be resized or dropped until unpin is called (a query with more
// observations than r has room for gives r new, unpinned slices). On the CPU
// engine it does nothing.
func (s *Searcher) PinResult(r *Result) (unpin func() error, err error) {
	if err := s.pinReady(r == nil); err != nil {
		return nil, err
	}
	return s.pinAnswers(r.Index, r.DistanceRad)
}

// pinAnswers is PinResult for a result's two columns; it does nothing
// off the GPU or where the columns are empty or of unequal lengths.
func (s *Searcher) pinAnswers(index []uint32, distanceRad []float32) (unpin func() error, err error) {
	g, ok := s.eng.(engine.HostPinner)
	n := len(index)
	if !ok || n == 0 || len(distanceRad) != n {
		return func() error { return nil }, nil
	}
	// The slices themselves are kept alive, not the result: the caller may
	// point it elsewhere while the old arrays are still registered.
	owner := [2]any{index, distanceRad}
	return pinColumns(g, []unsafe.Pointer{unsafe.Pointer(&index[0]), unsafe.Pointer(&distanceRad[0])}, 4*n, owner)
}

// pinsHost reports whether pinning host memory serves the searcher's
// engine (its GPUs copy straight from and into page-locked memory).
func (s *Searcher) pinsHost() bool {
	_, ok := s.eng.(engine.HostPinner)
	return ok && !s.closed
}

// pinReady refuses a pin on a closed searcher (whose GPU contexts are
// gone) or of a nil result.
func (s *Searcher) pinReady(nilResult bool) error {
	switch {
	case s.closed:
		return ErrClosed
	case nilResult:
		return errors.New("geoknn: nil result")
	}
	// Pinning is for the GPUs: a StartSearcher's waits for them.
	return s.WaitOpened(context.Background())
}

// pinColumns registers each column of size bytes; unpin undoes it and
// keeps owner alive until then.
func pinColumns(g engine.HostPinner, cols []unsafe.Pointer, size int, owner any) (unpin func() error, err error) {
	for k, c := range cols {
		if err := g.RegisterHost(c, size); err != nil {
			for _, done := range cols[:k] {
				err = errors.Join(err, g.UnregisterHost(done))
			}
			return nil, fmt.Errorf("geoknn: pinning: %w", err)
		}
	}
	return func() error {
		var errs []error
		for _, c := range cols {
			errs = append(errs, g.UnregisterHost(c))
		}
		runtime.KeepAlive(owner)
		return errors.Join(errs...)
	}, nil
}

// Pin page-locks the columns of p for the searcher's GPUs (registers them
// with the driver), so that the queries that read them copy them in
// straight from the caller's memory, with no staging copy: worth it for
// large sets queried more than once. The columns must not be modified or
// dropped until unpin is called. On the CPU engine, and for generated
// sets, it does nothing.
func (s *Searcher) Pin(p Points) (unpin func() error, err error) {
	if err := s.pinReady(false); err != nil {
		return nil, err
	}
	g, ok := s.eng.(engine.HostPinner)
	n := p.Len()
	if !ok || n == 0 || p.cols.Gen != nil {
		return func() error { return nil }, nil
	}
	cols := []unsafe.Pointer{unsafe.Pointer(unsafe.SliceData(p.cols.Lat64)), unsafe.Pointer(unsafe.SliceData(p.cols.Lon64))}
	size := 8 * n
	if p.cols.Is32() {
		cols = []unsafe.Pointer{unsafe.Pointer(unsafe.SliceData(p.cols.Lat32)), unsafe.Pointer(unsafe.SliceData(p.cols.Lon32))}
		size = 4 * n
	}
	return pinColumns(g, cols, size, [4]any{p.cols.Lat64, p.cols.Lon64, p.cols.Lat32, p.cols.Lon32})
}

// Metres is observation i's distance in metres.
func (r *Result) Metres(i int) float64 { return float64(r.DistanceRad[i]) * EarthRadiusMetres }

// Searcher answers queries on one engine, keeping its state between them.
// It is not safe for concurrent use; Close releases it, and every call
// after Close returns ErrClosed.
type Searcher struct {
	opts     Options
	eng      engine.Engine
	kind     Engine
	fallback string
	closed   bool
	// prepared, in an Index's own Searcher, is the index's references as
	// the engines take them: every query of that Searcher is against them.
	prepared *engine.Prepared
	// opening is the engine opening behind a StartSearcher's CPU engine
	// (nil once adopted or for NewSearcher's); openTime how long opening
	// took, and expected the stream announced meanwhile (Expect's n, k).
	opening  *opening
	openTime time.Duration
	expected [2]int
	// indexed: an Index has taken the searcher over (IndexOf).
	indexed bool
	// warmStop ends a CPU warm-up begun for a stream while the GPUs
	// opened (whileOpening), before the CPU engine is closed.
	warmStop context.CancelFunc
	// plannedFor is the prepared references planAhead last planned.
	plannedFor *engine.Prepared
	// openingRows counts the observations answered on the CPU while the
	// engine opened.
	openingRows atomic.Int64
}

// ErrClosed is returned by every call on a Searcher, Index or Session
// after its Close.
var ErrClosed = errors.New("geoknn: closed")

// NewSearcher opens the engine that opts asks for. With Engine Auto and no
// usable GPU it opens the CPU engine and records why in Fallback.
func NewSearcher(opts Options) (*Searcher, error) {
	defer opts.Trace.Begin("host: engine", "engine start")()
	return newSearcher(opts)
}

// newSearcher is NewSearcher, untraced.
func newSearcher(opts Options) (*Searcher, error) {
	t := time.Now()
	o, err := engines.Open(engineOptions(opts))
	if err != nil {
		return nil, fmt.Errorf("geoknn: %w", err)
	}
	s := &Searcher{opts: opts, eng: o.Engine, kind: CPU, fallback: o.Fallback, openTime: time.Since(t)}
	if o.OnGPU {
		s.kind = GPU
	}
	return s, nil
}

// engineOptions is opts as engines.Open takes them.
func engineOptions(opts Options) engines.Options {
	return engines.Options{Kind: engines.Kind(opts.Engine), Devices: opts.GPUs, First: opts.FirstGPU,
		Memory: engines.MemoryMode(opts.Memory), CPUWorkers: opts.CPUWorkers, Algorithm: engine.Algorithm(opts.Algorithm),
		Trace: opts.Trace.recorder()}
}

// Engine is the engine the searcher runs on: CPU or GPU (never Auto).
func (s *Searcher) Engine() Engine { return s.kind }

// Fallback explains why an Auto searcher runs on the CPU ("" otherwise).
func (s *Searcher) Fallback() string { return s.fallback }

// Close releases the engine's resources. Closing twice does nothing.
func (s *Searcher) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.stopWarm()
	return errors.Join(s.closeOpening(), s.eng.Close())
}

// CloseAtExit closes the searcher for a process about to exit, as a
// command's last step: every later call returns ErrClosed, and the GPUs'
// contexts and memory are left to the process's exit, which reclaims them
// at once, instead of being released one by one (76 ms for one H200, 191
// ms for two). A program that goes on running calls Close instead. On the
// CPU engine it is Close.
func (s *Searcher) CloseAtExit() error {
	if s.closed {
		return nil
	}
	if s.adopt(); s.opening != nil {
		// GPUs still opening are left to the exit: it comes sooner.
		s.closed, s.opening = true, nil
		s.stopWarm()
		return s.eng.Close()
	}
	g, ok := s.eng.(engine.ExitCloser)
	if !ok {
		return s.Close()
	}
	s.closed = true
	g.CloseAtExit()
	return nil
}

// ready refuses a call on a closed searcher or with a nil context.
func (s *Searcher) ready(ctx context.Context) error {
	if s.closed {
		return ErrClosed
	}
	if ctx == nil {
		return errors.New("geoknn: nil context")
	}
	s.adopt()
	return nil
}

// Nearest answers, for every observation, the nearest reference and its
// distance. The columns are read in place, never modified.
func (s *Searcher) Nearest(ctx context.Context, obs, ref Points) (*Result, error) {
	res := &Result{}
	return res, s.NearestInto(ctx, obs, ref, res)
}

// NearestInto is Nearest into a caller-owned result: res.Index and
// res.DistanceRad are reused when they have room for every observation
// (and allocated otherwise), so repeated large queries allocate nothing.
func (s *Searcher) NearestInto(ctx context.Context, obs, ref Points, res *Result) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	if res == nil {
		return errors.New("geoknn: nil result")
	}
	n := obs.Len()
	if s.bridges(obs) {
		s.planAhead(obs, ref)
		cols := answerRoom(&res.Index, &res.DistanceRad, n)
		defer cols.dropUnkept()
		st, err := s.bridged(obs, func(lo, hi int, req engine.Request) (engine.Stats, error) {
			return s.eng.Nearest(ctx, req, engine.Result{Index: res.Index[lo:hi], Distance: res.DistanceRad[lo:hi]})
		}, ref)
		if err == nil {
			cols.keep()
		}
		res.Fallback, res.Stats = s.fallback, st
		return err
	}
	res.Fallback = s.fallback
	if f, ok := s.eng.(engine.FreshNearest); ok && cap(res.Index) < n && cap(res.DistanceRad) < n {
		// A new result: the engine allocates it beside its first jobs.
		out, st, err := f.NearestFresh(ctx, s.request(obs, ref))
		if err != nil {
			return fmt.Errorf("geoknn: %w", err)
		}
		res.Index, res.DistanceRad, res.Stats = out.Index, out.Distance, statsOf(st)
		return nil
	}
	cols := answerRoom(&res.Index, &res.DistanceRad, n)
	defer cols.dropUnkept()
	st, err := s.eng.Nearest(ctx, s.request(obs, ref), engine.Result{Index: res.Index, Distance: res.DistanceRad})
	if err != nil {
		return fmt.Errorf("geoknn: %w", err)
	}
	cols.keep()
	s.countOpeningRows(s.opening != nil, n)
	res.Stats = statsOf(st)
	return nil
}

// answerRoom gives a result's columns room for n answers: the caller's
// where they have it, else new memory. Nearest and k-nearest queries
// write every answer (engine.KResult's contract; a row short of k ends in
// NoNeighbour), so the new memory is not cleared first, a single-threaded
// pass over every page on the call's critical path, but backed on every
// core (parallel.Written). The query keeps the columns once it succeeds;
// until then dropUnkept lets go of those made here, so that memory never
// cleared is never handed back after an error or a panic.
func answerRoom(index *[]uint32, distanceRad *[]float32, n int) *newColumns {
	c := &newColumns{index: index, distanceRad: distanceRad, freshIndex: cap(*index) < n, freshDist: cap(*distanceRad) < n}
	*index, *distanceRad = room(*index, n), room(*distanceRad, n)
	return c
}

// newColumns are a result's columns as answerRoom left them, and which
// of them it made.
type newColumns struct {
	index                 *[]uint32
	distanceRad           *[]float32
	freshIndex, freshDist bool
}

// keep marks the query done: the columns stay with the result.
func (c *newColumns) keep() { c.freshIndex, c.freshDist = false, false }

// dropUnkept lets go of the columns answerRoom made unless the query kept
// them; later calls do nothing.
func (c *newColumns) dropUnkept() {
	if c.freshIndex {
		*c.index = nil
	}
	if c.freshDist {
		*c.distanceRad = nil
	}
	c.keep()
}

// room is s with n entries, or parallel.Written's n.
func room[T uint32 | float32](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return parallel.Written[T](n)
}

// Nearest answers one query on a Searcher opened for it and closed after:
// for every observation, the nearest reference and its distance.
func Nearest(ctx context.Context, obs, ref Points, opts Options) (*Result, error) {
	s, err := NewSearcher(opts)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Nearest(ctx, obs, ref)
}
