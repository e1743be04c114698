//go:build linux

package worker

import (
	"context"
	"math"
	"time"
	"unsafe"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/stream"
)

// query answers a query against a fitted index: the observations sent in
// a descriptor, or with Self the references themselves.
func (w *worker) query(ctx context.Context, r request) (reply, *answerFile, error) {
	f, ok := w.indexes[r.Index]
	if !ok {
		return reply{}, nil, valuef("worker: no fitted index %d", r.Index)
	}
	if err := checkQuery(r, f.len()); err != nil {
		return reply{}, nil, err
	}
	q, err := r.query()
	if err != nil {
		return reply{}, nil, err
	}
	var lat, lon []float64
	if !r.Self {
		if len(r.fds) != 1+r.answerFDs() {
			return reply{}, nil, valuef("worker: a query wants the points' descriptor, got %d", len(r.fds))
		}
		var unmap func()
		if lat, lon, unmap, err = mapPoints(w.maps, r.fds[0], r.N); err != nil {
			return reply{}, nil, err
		}
		defer unmap()
	}
	return w.run(ctx, f, q, r.answerFD(), lat, lon)
}

// checkQuery refuses parameters the engine would refuse, as value
// errors named as NearestNeighbors names them.
func checkQuery(r request, nref int) error {
	avail := nref
	if r.Self {
		avail--
	}
	switch {
	case r.Kind == "knn" && (r.K < 1 || r.K > avail):
		return valuef("n_neighbors = %d: want 1 to the %d references", r.K, avail)
	case r.Kind == "knn" && !(r.MaxMetres >= 0 && !math.IsInf(r.MaxMetres, 1)):
		return valuef("max_distance = %v m: want a positive distance, or 0 for none", r.MaxMetres)
	case (r.Kind == "count" || r.Kind == "list") && !(r.RadiusMetres >= 0 && !math.IsInf(r.RadiusMetres, 1)):
		return valuef("radius = %v m: want a finite distance, 0 or more", r.RadiusMetres)
	case r.N < 0:
		return valuef("worker: %d observations", r.N)
	}
	return nil
}

// run answers q and writes the answer's arrays (into the buffer reuse, the
// request's, or a new one when -1).
func (w *worker) run(ctx context.Context, f *fitted, q geoknn.Query, reuse int, lat, lon []float64) (reply, *answerFile, error) {
	t := time.Now()
	if kind, _ := q.Kind(); kind == stream.KindNearest {
		a, pins, err := f.nearest(ctx, lat, lon, len(lat) > 0 && w.maps.cached(unsafe.Pointer(&lat[0])))
		if err != nil {
			return reply{}, nil, err
		}
		rep, ans, err := w.kReply(a, reuse, time.Since(t).Seconds()-pins.seconds)
		rep.PinSeconds, rep.Pinned = pins.seconds, pins.pinned
		if pins.err != nil {
			rep.PinError = pins.err.Error()
		}
		return rep, ans, err
	}
	ka, wa, err := f.answer(ctx, lat, lon, q)
	if err != nil {
		return reply{}, nil, err
	}
	if ka != nil {
		return w.kReply(ka, reuse, time.Since(t).Seconds())
	}
	took, t := time.Since(t).Seconds(), time.Now()
	ans, err := withinAnswerFile(wa, reuse, w.maps)
	return reply{Arrays: specsOf(ans), Engine: wa.engine, EngineSeconds: took, AnswerSeconds: time.Since(t).Seconds()},
		ans, err
}

// kReply writes a nearest or k-nearest answer's arrays, the engine having
// taken engineSeconds.
func (w *worker) kReply(a *kAnswer, reuse int, engineSeconds float64) (reply, *answerFile, error) {
	t := time.Now()
	ans, err := kAnswerFile(a, reuse, w.maps)
	return reply{Arrays: specsOf(ans), Engine: a.engine, EngineSeconds: engineSeconds,
		AnswerSeconds: time.Since(t).Seconds()}, ans, err
}

// answerFDs is 1 when the request brought a buffer for the answer (the
// last descriptor), else 0.
func (r request) answerFDs() int {
	if r.Answer {
		return 1
	}
	return 0
}

// answerFD is the buffer the request brought for the answer, or -1.
func (r request) answerFD() int {
	if r.Answer && len(r.fds) > 0 {
		return r.fds[len(r.fds)-1]
	}
	return -1
}

func specsOf(a *answerFile) []arraySpec {
	if a == nil {
		return nil
	}
	return a.specs
}

// kAnswerFile writes k answers an observation as index (n, k) int64 and
// distance (n, k) float64 metres.
func kAnswerFile(a *kAnswer, reuse int, cache *mapCache) (*answerFile, error) {
	n := len(a.index) / max(a.k, 1)
	f, err := newAnswerFile([]arraySpec{
		{Name: "index", Dtype: "<i8", Shape: []int{n, a.k}},
		{Name: "distance", Dtype: "<f8", Shape: []int{n, a.k}},
	}, reuse, cache)
	if err != nil {
		return nil, err
	}
	indexAndMetres(f.int64s(0), f.float64s(1), a.index, a.angle)
	return f, nil
}

// withinAnswerFile writes radius answers: count (n) int64, and with lists
// offsets (n+1), index and distance (metres) of every entry, nearest first.
func withinAnswerFile(a *withinAnswer, reuse int, cache *mapCache) (*answerFile, error) {
	n := len(a.counts)
	specs := []arraySpec{{Name: "count", Dtype: "<i8", Shape: []int{n}}}
	if a.offsets != nil {
		m := len(a.index)
		specs = append(specs, arraySpec{Name: "offsets", Dtype: "<i8", Shape: []int{n + 1}},
			arraySpec{Name: "index", Dtype: "<i8", Shape: []int{m}}, arraySpec{Name: "distance", Dtype: "<f8", Shape: []int{m}})
	}
	f, err := newAnswerFile(specs, reuse, cache)
	if err != nil {
		return nil, err
	}
	counts := f.int64s(0)
	inParallel(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			counts[i] = int64(a.counts[i])
		}
	})
	if a.offsets != nil {
		offsets := f.int64s(1)
		for i, o := range a.offsets {
			offsets[i] = int64(o)
		}
		indexAndMetres(f.int64s(2), f.float64s(3), a.index, a.angle)
	}
	return f, nil
}

// validRadians is the engine's test of a point, with its slack for the
// rounding of degrees converted to radians.
func validRadians(lat, lon float64) bool {
	const slack = 1e-12
	return lat >= -math.Pi/2-slack && lat <= math.Pi/2+slack && lon >= -math.Pi-slack && lon <= math.Pi+slack
}
