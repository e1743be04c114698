package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/internal/sysmem"
	"github.com/geoknn/geoknn/pointio/formats"
	"github.com/geoknn/geoknn/stream"
)

// Chunk sizes of a streamed run, in answers, by engine: on the CPU a
// chunk of 2^20 points costs far more than a query's fixed costs; a GPU
// answers 2^20 points in about a millisecond, so its chunks are larger to
// keep the per-query costs (job planning, launches, copies' latency)
// small. A k-nearest chunk holds k answers a point, so it has k times
// fewer points (not below minChunkRows): the memory in flight stays the
// same whatever k.
const (
	cpuChunkAnswers = 1 << 20
	gpuChunkAnswers = 1 << 23
	minChunkRows    = 1 << 12
	streamDepth     = 3 // chunks in flight: one a stage
)

// streams reports whether knn run streams its observations: a file or
// standard input queried once. Synthetic counts, --host-points and
// --repeat time queries of points held in memory; --mpi splits the
// observations by rank; answers with ids in a format that holds every
// row until the end anyway (formats.Format.RowsWhole: .npz, whose text
// columns' width is the longest id) are written whole.
func (f *runFlags) streams() bool {
	_, isFile, err := resolveArg("--obs", f.obs)
	if err != nil || !isFile || f.repeat > 1 || f.hostPoints || f.mpi {
		return false
	}
	out, err := f.output()
	return f.out == "" || err != nil || !out.RowsWhole || (f.obsID == "" && f.refID == "")
}

// streamJob is a streamed run: the flags, the prepared references and
// where reports go. Its stream and write are what a rank of an MPI job
// runs over its own rows (a reader of a range of the input).
type streamJob struct {
	f     runFlags
	x     *geoknn.Index
	s     *geoknn.Searcher // x's: whether its GPUs are still opening, why they failed
	ref   pointSet
	eng   geoknn.Engine
	algo  geoknn.Algorithm
	trace *geoknn.Trace
	bar   *progressBar // nil: none
	log   io.Writer    // reports: stderr
	// closed has x's Close's error once closeEngineEarly started it.
	closed chan error
	// toldFallback: the reason the GPUs were passed over was printed.
	toldFallback bool
}

// closeEngineEarly starts closing the engine on a goroutine of its own
// once the last answers are in the output's hands, so that the GPUs'
// contexts and memory are released while the output is finished and
// synced to the disk, rather than by the process's exit after it
// (0.13-0.20 s on one H200).
func (j *streamJob) closeEngineEarly() {
	// GPUs still opening are left to the exit: waiting for them would
	// keep a stream the CPU answered whole.
	if j.closed != nil || j.eng != geoknn.GPU || j.opening() {
		return
	}
	j.closed = make(chan error, 1)
	go func() {
		defer j.trace.Begin("host", "close engine")()
		j.closed <- j.x.Close()
	}()
}

// releaseEarly closes the input, which the stream has read to its end,
// and hands the stream's memory back to the system on a goroutine of its
// own, so that it is unmapped while the output is finished and synced to
// the disk rather than by the process's exit after the sync (a test
// program holding 1.5 GB on the development machine: 0.15 s of exit, or
// 2 ms after 0.09 s of handing back; knn run on one H200 host: 0.04-0.09
// s after the total line, against 0.14-0.21 s).
func (j *streamJob) releaseEarly(r stream.ChunkReader) {
	r.Close()
	go debug.FreeOSMemory()
}

// closeOnce is a reader that Close closes once however often it is
// called: knn run closes its input once the stream has read it all
// (releaseEarly), and again on every way out.
type closeOnce struct {
	stream.ChunkReader
	once sync.Once
	err  error
}

func (c *closeOnce) Close() error {
	c.once.Do(func() { c.err = c.ChunkReader.Close() })
	return c.err
}

// opening reports whether the GPUs are still opening behind the CPU,
// adopting them if they have opened or failed. Once closeEngineEarly has
// started closing the searcher (on another goroutine, which must be left
// alone with it) they had opened: it starts only then.
func (j *streamJob) opening() bool {
	return j.closed == nil && j.s.Opening()
}

// closeEngine ends the engine as the process's last step: it waits for
// the close closeEngineEarly started, or leaves the GPUs to the exit.
func (j *streamJob) closeEngine() error {
	if j.closed != nil {
		return <-j.closed
	}
	defer j.trace.Begin("host", "close engine")()
	return j.x.CloseAtExit() // the process exits next: its exit frees the GPUs at once
}

// runStream is knn run over a file of observations, streamed: the
// references are loaded and prepared once while the engine starts, then
// the observations go through read, query and write a chunk at a time.
func runStream(ctx context.Context, f runFlags, opts geoknn.Options, stdout, stderr io.Writer) error {
	t0 := time.Now()
	openc := startEngine(opts, geoknn.StartSearcher)
	refs := startLoadRef(ctx, f, opts.Trace) // not behind likelyEngine's wait
	likely := likelyEngine(opts.Engine, openc)
	resume := func() {}
	if likely == geoknn.GPU {
		resume = pauseCollection()
	}
	defer resume()
	r, eng, obsErr := openObsEarly(ctx, f, likely)
	if obsErr == nil && r != nil && opts.Engine == geoknn.GPU && f.plansAhead(opts) {
		r = peekFirst(ctx, r, f.obs)
	}
	j, load, err := prepareStreamJob(ctx, f, opts, stderr, openc, refs, t0, r)
	if err != nil || obsErr != nil {
		closeStreamStart(j, r)
		return cmp.Or(err, obsErr)
	}
	defer j.x.CloseAtExit() // on an error; the process exits next
	j.bar = newProgressBar(f.barWriter(stderr), f.quiet)
	defer j.bar.done()
	if r, err = j.reopenFor(ctx, r, eng); err != nil {
		return err
	}
	r = &closeOnce{ChunkReader: r}
	defer r.Close()
	if err := j.checkMemory(r.Rows()); err != nil {
		return err
	}
	resume()
	if _, k := j.f.q.Kind(); j.eng == geoknn.CPU || k <= 1 {
		defer limitHeap(j.heapLimit(r.Rows()))()
	}
	st, err := j.write(ctx, r, f.out, stdout)
	j.opening() // adopts GPUs opened or failed while the stream ran
	j.tellFallback(true)
	if err != nil {
		return err
	}
	j.report(st, load, r.Rows())
	if err := j.closeEngine(); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "total:        %.3f s\n", time.Since(t0).Seconds())
	return reportTrace(ctx, stderr, j.trace, f)
}

// openObsEarly opens --obs while the engine starts, in the chunks of the
// engine it will likely be, so that the first chunks are read (Parquet
// row groups and CSV blocks ahead) by the time the engine is ready; eng
// is the engine the chunks are sized for. Standard input waits for the
// engine: it cannot be opened twice.
func openObsEarly(ctx context.Context, f runFlags, eng geoknn.Engine) (stream.ChunkReader, geoknn.Engine, error) {
	if f.obs == "-" {
		return nil, eng, nil
	}
	r, err := openObsChunks(ctx, f, chunkRowsFor(f, eng))
	return r, eng, err
}

// reopenFor is r, opened in the chunks of j's engine: reopened when it
// was opened (openObsEarly) for another, or opened now when it was not.
func (j *streamJob) reopenFor(ctx context.Context, r stream.ChunkReader, eng geoknn.Engine) (stream.ChunkReader, error) {
	if r != nil && chunkRowsFor(j.f, eng) == j.chunkRows() {
		return r, nil
	}
	if r != nil {
		r.Close()
	}
	return openObsChunks(ctx, j.f, j.chunkRows())
}

// closeStreamStart releases what a failed start opened (either may be nil).
func closeStreamStart(j *streamJob, r stream.ChunkReader) {
	if r != nil {
		r.Close()
	}
	if j != nil {
		j.x.CloseAtExit() // GPUs still opening are left to the exit
	}
}

// startEngine opens the engine opts asks for with open on a goroutine of
// its own: geoknn.NewSearcher, or for a stream geoknn.StartSearcher, whose
// Auto engine answers on the CPU while the GPUs open behind it (the
// engines give the same distances bit for bit and order equal ones by
// index, so a file's bytes do not depend on which rows the CPU answered).
func startEngine(opts geoknn.Options, open func(geoknn.Options) (*geoknn.Searcher, error)) chan openedSearcher {
	openc := make(chan openedSearcher, 1)
	go func() {
		s, err := open(opts)
		openc <- openedSearcher{s, err}
	}()
	return openc
}

// engineGuessWait is how long likelyEngine waits for an automatic engine:
// without a GPU driver it is ready in microseconds; loading a driver
// takes a few hundred milliseconds.
const engineGuessWait = 50 * time.Millisecond

// likelyEngine is the engine a run will have: the one asked for, or for
// Auto the one opened if it is ready within engineGuessWait, else GPU (a
// driver is loading; the CPU answers meanwhile). The opened searcher
// stays in openc.
func likelyEngine(asked geoknn.Engine, openc chan openedSearcher) geoknn.Engine {
	if asked != geoknn.Auto {
		return asked
	}
	o := <-openc // StartSearcher's: at once
	openc <- o
	if o.err != nil {
		return geoknn.CPU
	}
	ctx, cancel := context.WithTimeout(context.Background(), engineGuessWait)
	defer cancel()
	if o.s.WaitOpened(ctx) != nil {
		return geoknn.GPU
	}
	return o.s.Engine()
}

// openStreamJob starts the engine while the references load, checks
// them against the flags and prepares them on the engine; it returns the
// time loading and starting took.
func openStreamJob(ctx context.Context, f runFlags, opts geoknn.Options, stderr io.Writer) (*streamJob, loadTimes, error) {
	t0 := time.Now()
	return prepareStreamJob(ctx, f, opts, stderr, startEngine(opts, geoknn.StartSearcher), startLoadRef(ctx, f, opts.Trace), t0, nil)
}

// loadedRef is the references startLoadRef loaded, when it finished
// loading them, and the references prepared.
type loadedRef struct {
	ref  pointSet
	refs *geoknn.References
	err  error
	done time.Time
}

// startLoadRef loads --ref on a goroutine of its own, checks it against
// the flags and prepares it there: beside the wait for a guess at the
// engine and the opening of --obs, not after them (the 135,233 cities:
// 18 ms to load, 62 ms to prepare on one H200 host, where the guess
// waits 50 ms).
func startLoadRef(ctx context.Context, f runFlags, tr *geoknn.Trace) <-chan loadedRef {
	refc := make(chan loadedRef, 1)
	go func() {
		end := tr.Begin("host", "load references")
		ref, err := loadRef(ctx, f)
		end()
		l := loadedRef{ref: ref, err: err, done: time.Now()}
		if err == nil {
			l.refs, l.err = prepareRefs(f, ref, tr)
		}
		refc <- l
	}()
	return refc
}

// prepareStreamJob is openStreamJob with the engine started at t0 on
// openc and the references loading on refc; with obs peeked
// (peekFirst), the GPUs' query of its first chunk is planned too.
func prepareStreamJob(ctx context.Context, f runFlags, opts geoknn.Options, stderr io.Writer, openc <-chan openedSearcher, refc <-chan loadedRef, t0 time.Time, obs stream.ChunkReader) (*streamJob, loadTimes, error) {
	loaded := <-refc
	ref, refs, loadErr := loaded.ref, loaded.refs, loaded.err
	times := loadTimes{load: loaded.done.Sub(t0)}
	if loadErr == nil {
		planFromFirst(ctx, obs, refs, opts)
	}
	o := <-openc
	if o.err != nil {
		return nil, times, o.err
	}
	if loadErr != nil {
		o.s.CloseAtExit() // the process exits next; GPUs still opening are left to it
		return nil, times, loadErr
	}
	eng := plannedEngine(o.s) // adopts GPUs that failed by now
	x, err := o.s.IndexOf(refs)
	if err != nil {
		o.s.CloseAtExit() // the process exits next; GPUs still opening are left to it
		return nil, times, err
	}
	j := &streamJob{f: f, x: x, s: o.s, ref: ref, eng: eng, algo: opts.Algorithm, trace: opts.Trace, log: stderr}
	j.tellFallback(false)
	return j, times, nil
}

// tellFallback says, once, why an Auto engine runs (or, after the
// stream, ran) on the CPU, when it is known: GPUs opening behind the CPU
// may fail after the stream began.
func (j *streamJob) tellFallback(after bool) {
	if j.toldFallback || j.s.Fallback() == "" {
		return
	}
	verb := "running"
	if after {
		verb = "ran"
	}
	fmt.Fprintf(j.log, "knn: no GPU (%s): %s on the CPU\n", j.s.Fallback(), verb)
	j.toldFallback = true
}

// plannedEngine is the engine s answers on, or GPU while its GPUs are
// opening behind the CPU: the engine a stream's chunks are sized for.
func plannedEngine(s *geoknn.Searcher) geoknn.Engine {
	if s.Opening() {
		return geoknn.GPU
	}
	return s.Engine()
}

// prepareRefs checks the references against the flags and prepares
// them.
func prepareRefs(f runFlags, ref pointSet, tr *geoknn.Trace) (*geoknn.References, error) {
	if err := f.checkRefs(ref.cols.Len()); err != nil {
		return nil, err
	}
	defer tr.Begin("host", "prepare references")()
	return geoknn.PrepareReferences(ref.cols)
}

// loadTimes are the references' load, concurrent with the engine's start.
type loadTimes struct{ load time.Duration }

type openedSearcher struct {
	s   *geoknn.Searcher
	err error
}

// checkRefs checks --k against nref references, before any observation
// is queried.
func (f *runFlags) checkRefs(nref int) error {
	if kind, _ := f.q.Kind(); kind == stream.KindKNearest {
		return f.checkK(nref)
	}
	return nil
}

// checkMemory refuses a run whose references and chunks in flight need
// more memory than the host has, before the first chunk is read; rows is
// the input's (-1: not known).
func (j *streamJob) checkMemory(rows int64) error {
	return j.f.checkPlanMemory(j.heldRows(rows), j.ref.cols.Len(), true)
}

// heldRows is the observations held at once: the chunks in flight, or
// the input's rows (-1: not known) if fewer.
func (j *streamJob) heldRows(rows int64) int {
	held := int64(streamDepth * j.chunkRows())
	if rows >= 0 {
		held = min(held, rows)
	}
	return int(held)
}

// Memory a streamed run holds beside its plan: the output's batches being
// encoded (64 bytes an answer, at most 1 GiB: arrowio's bound), and room
// for what the collector has not yet swept.
const (
	encodeBytesPerAnswer = 64
	encodeBytesMost      = 1 << 30
	heapHeadroom         = 32 << 20
)

// heapLimit is the heap a streamed run of rows observations needs: its
// plan (references, chunks and their answers), the output's batches in
// flight and some headroom.
func (j *streamJob) heapLimit(rows int64) int64 {
	plan := j.f.estimate(j.heldRows(rows), j.ref.cols.Len(), true)
	_, k := j.f.q.Kind()
	encode := min(int64(runtime.GOMAXPROCS(0))*(1<<20)*int64(max(k, 1))*encodeBytesPerAnswer, int64(encodeBudget(k)))
	lists := int64(0)
	if kind, _ := j.f.q.Kind(); kind == stream.KindWithinLists {
		// A chunk's radius lists, found a window at a time as written:
		// left out, the collector ran all but continuously near the
		// limit (92 s against 39 s for 2^16 x 2^12 within 20,000 km).
		lists = 2 * geoknn.StreamListBytes()
	}
	need := int64(plan.total()) + encode + lists + heapHeadroom
	if j.eng != geoknn.CPU {
		need = max(need, gpuHeapFloor())
	}
	return need
}

// gpuHeapFloor is the least soft limit of a stream the GPUs answer:
// 2.5 GiB, or a quarter of the memory available if that is less. There
// the host's reading and writing are the run, and a heap held near what
// is live spends their cores collecting and returning pages to the
// system (BENCHMARKS.md, "Files in, files out": Heap).
func gpuHeapFloor() int64 {
	floor := int64(2560 << 20)
	if avail, ok := sysmem.Available(); ok {
		floor = min(floor, int64(avail/4))
	}
	return floor
}

// pauseCollection stops the collector while a GPU stream starts, and
// returns the function that resumes it (once; later calls do nothing).
// The heap grows from nothing to its working size then (the references
// loaded and indexed, the input's first chunks read ahead): at the
// default GOGC it was collected four times in the first 0.6 s, once with
// every core stopped for 51 ms, and the references took 0.15-0.25 s to
// load against 0.02 s alone (2^27 Parquet on one H200, GODEBUG=gctrace=1).
// The GPU heap floor stays a limit meanwhile; a user's GOGC or
// GOMEMLIMIT is kept.
func pauseCollection() (resume func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	lastLimit := debug.SetMemoryLimit(gpuHeapFloor())
	lastPercent := debug.SetGCPercent(-1)
	var once sync.Once
	return func() {
		once.Do(func() {
			debug.SetGCPercent(lastPercent)
			debug.SetMemoryLimit(lastLimit)
		})
	}
}

// limitHeap makes bytes the collector's soft memory limit, unless the
// user set one (GOMEMLIMIT), and returns the function that restores the
// last one. Without it the heap of a stream, whose chunks come and go,
// grows to twice what is live before a collection: the limit keeps the
// resident memory near what the run holds, at the cost of more frequent
// collections near it. On GPUs it is not set for k nearest: there the
// Parquet groups being encoded (8 x 2^20 answers each) outgrew the
// estimate, and a heap held at the limit spent the cores on collections.
func limitHeap(bytes int64) (restore func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	last := debug.SetMemoryLimit(bytes)
	return func() { debug.SetMemoryLimit(last) }
}

// chunkRows is the chunk size of j's engine (chunkRowsFor).
func (j *streamJob) chunkRows() int { return chunkRowsFor(j.f, j.eng) }

// chunkRowsFor is --chunk-rows, else the chunk size of eng for the
// flags' query.
func chunkRowsFor(f runFlags, eng geoknn.Engine) int {
	if f.chunkRows > 0 {
		return f.chunkRows
	}
	answers := cpuChunkAnswers
	if eng == geoknn.GPU {
		answers = gpuChunkAnswers
	}
	_, k := f.q.Kind()
	return max(answers/max(k, 1), minChunkRows)
}

// report prints the engine, the points and the stream's stages.
func (j *streamJob) report(st geoknn.StreamStats, load loadTimes, rows int64) {
	w, es := j.log, st.Engine
	fmt.Fprintf(w, "engine:       %s (%s), algorithm %s\n", es.Engine, strings.Join(es.Devices, ", "), j.algo)
	fmt.Fprintf(w, "observations: %d (%s, streamed in %d chunks)\nreferences:   %d (%s)\n", st.Rows, describe(j.f.obs, "standard input"), st.Chunks, j.ref.cols.Len(), j.ref.desc)
	pairs := float64(st.Rows) * float64(j.ref.cols.Len())
	fmt.Fprintf(w, "stream:       %.3f s, %.3g pairs/s; busy: read %.3f s, query %.3f s, write %.3f s (overlapping)",
		st.Wall.Seconds(), pairs/st.Wall.Seconds(), st.Read.Seconds(), st.Query.Seconds(), st.Write.Seconds())
	if kind, _ := j.f.q.Kind(); kind != stream.KindNearest {
		fmt.Fprintf(w, "; %s", j.f.querySummary(j.ref.cols.Len()))
	}
	fmt.Fprintln(w)
	if es.Kernel > 0 {
		fmt.Fprintf(w, "kernels:      GPU %.1f ms (index %.2f ms), copies in %.1f ms, out %.1f ms; %d jobs, %d refined in float64\n",
			ms(es.Kernel), ms(es.Index), ms(es.Upload), ms(es.Download), es.Jobs, es.Refined)
	}
	if es.Note != "" {
		fmt.Fprintf(w, "index:        %s\n", es.Note)
	}
	fmt.Fprintf(w, "load references %.3f s, ", load.load.Seconds())
	switch {
	case j.s.Fallback() != "":
		fmt.Fprintf(w, "no GPU: the CPU answered every observation\n")
	case j.opening(), st.Rows > 0 && st.OpeningRows >= st.Rows:
		fmt.Fprintf(w, "the CPU answered every observation while the GPUs opened\n")
	case st.OpeningRows > 0:
		fmt.Fprintf(w, "engine start %.3f s (concurrent; the CPU answered %d observations meanwhile)\n", j.s.OpenTime().Seconds(), st.OpeningRows)
	default:
		fmt.Fprintf(w, "engine start %.3f s (concurrent)\n", j.s.OpenTime().Seconds())
	}
}

// openObsChunks opens --obs for reading in chunks of about rows points
// (formats.OpenChunks: standard input and pipes by their content).
func openObsChunks(ctx context.Context, f runFlags, rows int) (stream.ChunkReader, error) {
	return formats.OpenChunks(ctx, f.obs, f.readOptions(f.obsID), rows)
}
