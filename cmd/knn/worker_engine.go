//go:build linux

package main

// Every use of the root package by `knn worker` is in this file, so that a
// change of the public API touches it alone.

import (
	"context"

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

func (w *workerIndex) len() int { return w.ref.Len() }

// points wraps query columns, or the references themselves for self.
func (w *workerIndex) points(lat, lon []float64, self bool) geoknn.Points {
	if self {
		return w.ref
	}
	return geoknn.Radians64(lat, lon)
}

// nearest answers the nearest reference of every observation.
func (w *workerIndex) nearest(ctx context.Context, lat, lon []float64) (*kAnswer, error) {
	obs := w.points(lat, lon, false)
	if err := w.x.NearestInto(ctx, obs, &w.res); err != nil {
		return nil, classify(err, obs, "observations")
	}
	return &kAnswer{k: 1, index: w.res.Index, angle: w.res.DistanceRad, engine: w.res.Stats.Engine}, nil
}

// kNearest answers the k nearest references (maxMetres 0: no limit); with
// self the observations are the references, each without itself.
func (w *workerIndex) kNearest(ctx context.Context, lat, lon []float64, k int, maxMetres float64, self bool) (*kAnswer, error) {
	obs := w.points(lat, lon, self)
	if self {
		k++
	}
	res, err := w.x.KNearest(ctx, obs, k, maxMetres)
	if err != nil {
		return nil, classify(err, obs, "observations")
	}
	if self {
		res = res.WithoutSelf()
	}
	return &kAnswer{k: res.K, index: res.Index, angle: res.DistanceRad, engine: res.Stats.Engine}, nil
}

// within answers the references within metres (counts, or lists nearest
// first); with self the observations are the references, each without
// itself.
func (w *workerIndex) within(ctx context.Context, lat, lon []float64, metres float64, list, self bool) (*withinAnswer, error) {
	obs := w.points(lat, lon, self)
	within := w.x.WithinCount
	if list {
		within = w.x.WithinList
	}
	res, err := within(ctx, obs, metres)
	if err != nil {
		return nil, classify(err, obs, "observations")
	}
	if self {
		res = res.WithoutSelf()
	}
	return &withinAnswer{counts: res.Counts, offsets: res.Offsets, index: res.Index, angle: res.DistanceRad,
		engine: res.Stats.Engine}, nil
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
