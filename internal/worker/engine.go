//go:build linux

package worker

// Every engine call of `knn worker` is in this file, so that a change of
// the public API touches it (and the Query it answers) alone.

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/geoknn/geoknn"
)

// noNeighbour marks the entries of a k-nearest row past its maximum
// distance.
const noNeighbour = geoknn.NoNeighbour

// earthRadiusMetres turns the engine's angles into metres.
const earthRadiusMetres = geoknn.EarthRadiusMetres

// workerIndex is one fitted reference set: the prepared Index and the
// columns it reads in place (kept mapped while it lives).
type workerIndex struct {
	x   *geoknn.Index
	ref geoknn.Points
	// res takes every nearest query's answers, so that a large query
	// finds its pages mapped already (the answers are copied out into the
	// answer file before the next query).
	res geoknn.Result
	// resUnpin undoes the page-locking of res's slices for the GPUs (nil:
	// not pinned); resPinned is how many answers they hold.
	resUnpin  func() error
	resPinned int
	// pins are the query buffers page-locked for the index's GPUs, by the
	// start of the worker's mapping.
	pins map[unsafe.Pointer]queryPin
	// lastBuf and lastN are the mapping and size of the last nearest
	// query: a buffer queried twice alike is worth pinning.
	lastBuf unsafe.Pointer
	lastN   int
	// pinErr is the first pinning that failed: the index stops trying.
	pinErr error
}

// queryPin is a query buffer pinned for n points, and how to undo it.
type queryPin struct {
	n     int
	unpin func() error
}

// kAnswer holds k answers an observation, row-major: angles in radians,
// noNeighbour past the maximum distance.
type kAnswer struct {
	k      int
	index  []uint32
	angle  []float32
	engine string
}

// withinAnswer holds radius answers: counts, and with lists offsets
// (len(counts)+1) into index and angle.
type withinAnswer struct {
	counts  []uint32
	offsets []uint64
	index   []uint32
	angle   []float32
	engine  string
}

// newWorkerIndex prepares the references (radian columns, read in place)
// on the engine named ("auto", "cpu" or "gpu") with gpus GPUs (0: all).
func newWorkerIndex(lat, lon []float64, engineName string, gpus int) (*workerIndex, error) {
	e, err := geoknn.ParseEngine(engineName)
	if err != nil {
		return nil, valueError{err: err}
	}
	ref := geoknn.Radians64(lat, lon)
	x, err := geoknn.NewIndex(ref, geoknn.Options{Engine: e, GPUs: gpus})
	if err != nil {
		return nil, classify(err, ref, "references")
	}
	return &workerIndex{x: x, ref: ref}, nil
}

func (w *workerIndex) close() error { return w.x.Close() }

// onGPU reports whether the index's last large query ran on GPUs: only
// there is pinning worth anything.
func (w *workerIndex) onGPU() bool { return w.res.Stats.Engine == "gpu" }

// pinQuery page-locks the observations of a query buffer the Python side
// reuses (lat and lon at the start of the worker's cached mapping) for the
// index's GPUs, once: they then copy the points straight from it, with no
// staging copy in the engine. The registration (tens of milliseconds for
// 256 MiB) is paid by a buffer's second query alike, never by a one-off
// one. Where the driver refuses, queries stage the points as before.
func (w *workerIndex) pinQuery(lat, lon []float64) error {
	p := unsafe.Pointer(unsafe.SliceData(lat))
	if pin, ok := w.pins[p]; ok && pin.n == len(lat) {
		return nil
	}
	w.unpinQuery(p)
	unpin, err := w.x.Pin(geoknn.Radians64(lat, lon))
	if err != nil {
		return err
	}
	if w.pins == nil {
		w.pins = map[unsafe.Pointer]queryPin{}
	}
	w.pins[p] = queryPin{n: len(lat), unpin: unpin}
	return nil
}

// unpinQuery undoes pinQuery of the buffer mapped at p (before the worker
// unmaps it).
func (w *workerIndex) unpinQuery(p unsafe.Pointer) {
	if pin, ok := w.pins[p]; ok {
		pin.unpin()
		delete(w.pins, p)
	}
}

// pinResult page-locks the kept result's slices, whole, for the GPUs once
// a query reuses them (n answers fit), so that the GPUs copy the answers
// straight into them; a refusal leaves them staged as before.
func (w *workerIndex) pinResult(n int) (pinned bool, err error) {
	size := min(cap(w.res.Index), cap(w.res.DistanceRad))
	switch {
	case w.resUnpin != nil && n <= w.resPinned:
		return true, nil
	case size < n:
		return false, nil
	}
	w.unpinResult()
	whole := geoknn.Result{Index: w.res.Index[:size], DistanceRad: w.res.DistanceRad[:size]}
	unpin, err := w.x.PinResult(&whole)
	if err != nil {
		return false, err
	}
	w.resUnpin, w.resPinned = unpin, size
	return true, nil
}

func (w *workerIndex) unpinResult() {
	if w.resUnpin != nil {
		w.resUnpin()
		w.resUnpin, w.resPinned = nil, 0
	}
}

func (w *workerIndex) len() int { return w.ref.Len() }

// points wraps query columns, or the references themselves for self.
func (w *workerIndex) points(lat, lon []float64, self bool) geoknn.Points {
	if self {
		return w.ref
	}
	return geoknn.Radians64(lat, lon)
}

// nearest answers the nearest reference of every observation; cached
// says the points lie in a mapping the worker keeps (and unpins before it
// unmaps it): on GPUs, one that this index queried last with as many
// points is pinned, and so is the kept result once it is reused (see
// pinning).
func (w *workerIndex) nearest(ctx context.Context, lat, lon []float64, cached bool) (*kAnswer, pinning, error) {
	obs := w.points(lat, lon, false)
	p := unsafe.Pointer(unsafe.SliceData(lat))
	again := cached && p == w.lastBuf && len(lat) == w.lastN
	w.lastBuf, w.lastN = p, len(lat)
	var pins pinning
	if w.onGPU() {
		pins = w.pinNearest(lat, lon, again)
	}
	if err := w.x.NearestInto(ctx, obs, &w.res); err != nil {
		return nil, pins, classify(err, obs, "observations")
	}
	return &kAnswer{k: 1, index: w.res.Index, angle: w.res.DistanceRad, engine: w.res.Stats.Engine}, pins, nil
}

// pinning says what a query's GPUs read or wrote in place, page-locked
// ("points", "answers"), and why a pinning failed (the query then stages
// what was not pinned, as an unpinned one does).
type pinning struct {
	pinned  []string
	err     error
	seconds float64 // spent pinning (not the engine's)
}

// pinNearest pins a nearest query's points (when queried again alike)
// and the kept result, until a pinning fails.
func (w *workerIndex) pinNearest(lat, lon []float64, again bool) (pins pinning) {
	if w.pinErr != nil {
		return pinning{err: w.pinErr}
	}
	t := time.Now()
	defer func() { w.pinErr, pins.seconds = pins.err, time.Since(t).Seconds() }()
	if again {
		if err := w.pinQuery(lat, lon); err != nil {
			pins.err = fmt.Errorf("pinning the points: %w", err)
		} else {
			pins.pinned = append(pins.pinned, "points")
		}
	}
	ok, err := w.pinResult(len(lat))
	if ok {
		pins.pinned = append(pins.pinned, "answers")
	}
	if err != nil {
		pins.err = errors.Join(pins.err, fmt.Errorf("pinning the answers: %w", err))
	}
	return pins
}

// query is the question r asks as the engine takes it: the worker's
// kinds are NearestNeighbors' (nearest, knn, count, list), a radius of 0
// included (the references at the observation's spot).
func (r request) query() (geoknn.Query, error) {
	q := geoknn.Query{ExcludeSelf: r.Self}
	switch r.Kind {
	case "nearest":
	case "knn":
		q.K, q.MaxMetres = r.K, r.MaxMetres
	case "count", "list":
		q.Within, q.RadiusMetres, q.List = true, r.RadiusMetres, r.Kind == "list"
	default:
		return q, valuef("worker: unknown query kind %q", r.Kind)
	}
	return q, nil
}

// answer answers q, a k-nearest or radius query (nearest has its own path
// for its kept, pinned result); with q.ExcludeSelf the observations are
// the references, each without itself.
func (w *workerIndex) answer(ctx context.Context, lat, lon []float64, q geoknn.Query) (*kAnswer, *withinAnswer, error) {
	obs := w.points(lat, lon, q.ExcludeSelf)
	a, err := w.x.Answer(ctx, obs, q)
	if err != nil {
		return nil, nil, classify(err, obs, "observations")
	}
	if r := a.K; r != nil {
		return &kAnswer{k: r.K, index: r.Index, angle: r.DistanceRad, engine: r.Stats.Engine}, nil, nil
	}
	r := a.Within
	return nil, &withinAnswer{counts: r.Counts, offsets: r.Offsets, index: r.Index, angle: r.DistanceRad,
		engine: r.Stats.Engine}, nil
}

// classify tells bad points (a valueError naming the first bad row) from
// other failures; it checks the points only once the engine refused them,
// so that a good query pays nothing for it.
func classify(err error, p geoknn.Points, what string) error {
	checkErr := p.Check(what)
	if err == nil || checkErr == nil {
		return err
	}
	row := -1
	for i := range p.Len() {
		if lat, lon := p.At(i); !validRadians(lat, lon) {
			row = i
			break
		}
	}
	return valueError{err: checkErr, row: row, what: what}
}
