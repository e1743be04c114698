package geoknn

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/engines"
	"github.com/geoknn/geoknn/internal/parallel"
)

// NoNeighbour marks the entries of a KResult row past the references found
// within its maximum distance.
const NoNeighbour = engine.NoNeighbour

// KResult holds the k nearest references of every observation, row-major:
// observation i's are Index[i*K:(i+1)*K] and DistanceRad[i*K:(i+1)*K],
// nearest first, ties to the lower reference index. Exact duplicates among
// the references are listed one by one. Where fewer than K references lie
// within the maximum distance, the row ends in NoNeighbour and +Inf.
type KResult struct {
	K           int
	Index       []uint32
	DistanceRad []float32 // great-circle angles, radians
	Stats       Stats
}

// NewKResult returns a KResult with room for the k nearest of n
// observations, for KNearestInto, its memory touched on every core as
// NewResult's is: k answers a row make large results (2^27 observations,
// k = 8: 8.6 GB), whose first writes would otherwise fault inside the
// query. Make it while the engine starts, or once for many queries.
func NewKResult(n, k int) *KResult {
	size := max(n, 0) * max(k, 0)
	return &KResult{K: k, Index: parallel.Touched[uint32](size), DistanceRad: parallel.Touched[float32](size)}
}

// Metres is the distance of observation i's rank-th nearest (from 0).
func (r *KResult) Metres(i, rank int) float64 {
	return float64(r.DistanceRad[i*r.K+rank]) * EarthRadiusMetres
}

// WithinResult holds, for every observation, the references within a
// radius: Counts[i] of them, and with lists Index[Offsets[i]:Offsets[i+1]]
// and DistanceRad likewise, nearest first, ties to the lower index.
type WithinResult struct {
	Counts      []uint32
	Offsets     []uint64 // len(Counts)+1 with lists, else nil
	Index       []uint32
	DistanceRad []float32
	Stats       Stats
}

// Metres is list entry j's distance in metres (observation i's entries
// are Offsets[i] to Offsets[i+1]).
func (r *WithinResult) Metres(j int) float64 {
	return float64(r.DistanceRad[j]) * EarthRadiusMetres
}

// KNearest answers the k nearest references of every observation, exactly
// (k from 1 to the number of references: more is refused); with
// maxMetres > 0 no reference farther than maxMetres is returned. The GPU
// engine answers k up to 64 on the GPUs (grid or brute force, as
// Options.Algorithm says), larger k on the host's cores.
func (s *Searcher) KNearest(ctx context.Context, obs, ref Points, k int, maxMetres float64) (*KResult, error) {
	res := &KResult{K: k}
	return res, s.KNearestInto(ctx, obs, ref, maxMetres, res)
}

// KNearestInto is KNearest into a caller-owned result: res.K is the k
// asked for, and res.Index and res.DistanceRad are reused when they have
// room for k answers an observation (allocated otherwise), so repeated
// large queries allocate nothing.
func (s *Searcher) KNearestInto(ctx context.Context, obs, ref Points, maxMetres float64, res *KResult) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	maxRad, err := checkKNearest(res, ref.Len(), maxMetres)
	if err != nil {
		return err
	}
	n, k := obs.Len(), res.K
	end := s.opts.Trace.recorder().Begin("host", "allocate answers")
	cols := answerRoom(&res.Index, &res.DistanceRad, n*k)
	defer cols.dropUnkept()
	end()
	if s.bridges(obs) {
		res.Stats, err = s.bridged(obs, func(lo, hi int, req engine.Request) (engine.Stats, error) {
			out := engine.KResult{K: k, Index: res.Index[lo*k : hi*k], Distance: res.DistanceRad[lo*k : hi*k]}
			return engines.KNearest(ctx, s.eng, req, maxRad, out)
		}, ref)
		if err == nil {
			cols.keep()
		}
		return err
	}
	out := engine.KResult{K: k, Index: res.Index, Distance: res.DistanceRad}
	st, err := engines.KNearest(ctx, s.eng, s.request(obs, ref), maxRad, out)
	if err != nil {
		return fmt.Errorf("geoknn: %w", err)
	}
	cols.keep()
	s.countOpeningRows(s.opening != nil, n)
	res.Stats = statsOf(st)
	return nil
}

// PinKResult is PinResult for k-nearest answers: r's slices, sized for
// the queries to come (n observations: n*r.K entries each), page-locked
// so that the GPUs copy answers straight into them, with no staging copy
// on the host. The same rules hold: r must not be resized or dropped
// until unpin is called; on the CPU engine it does nothing.
func (s *Searcher) PinKResult(r *KResult) (unpin func() error, err error) {
	if err := s.pinReady(r == nil); err != nil {
		return nil, err
	}
	return s.pinAnswers(r.Index, r.DistanceRad)
}

// checkKNearest checks a k-nearest query's result and limits, and returns
// its maximum distance in radians.
func checkKNearest(res *KResult, nref int, maxMetres float64) (float64, error) {
	if res == nil {
		return 0, errors.New("geoknn: nil result")
	}
	if err := CheckK(res.K, nref); err != nil {
		return 0, err
	}
	return maxDistanceRad(maxMetres)
}

// CheckK is the rule for k, the same in the API and the command line: from
// 1 to the number of references nref, more refused with both named.
func CheckK(k, nref int) error {
	if err := engine.CheckKRefs(k, nref); err != nil {
		return fmt.Errorf("geoknn: %w", err)
	}
	return nil
}

// WithinCount answers, for every observation, how many references lie
// within metres of it (a reference at exactly that distance counts,
// decided in float64).
func (s *Searcher) WithinCount(ctx context.Context, obs, ref Points, metres float64) (*WithinResult, error) {
	return s.within(ctx, obs, ref, metres, false)
}

// WithinList answers, for every observation, which references lie within
// metres of it, nearest first, ties to the lower index, and their counts.
func (s *Searcher) WithinList(ctx context.Context, obs, ref Points, metres float64) (*WithinResult, error) {
	return s.within(ctx, obs, ref, metres, true)
}

func (s *Searcher) within(ctx context.Context, obs, ref Points, metres float64, list bool) (*WithinResult, error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	rad, err := radiusRad(metres)
	if err != nil {
		return nil, err
	}
	res, st, err := s.eng.Within(ctx, s.request(obs, ref), rad, list)
	if err != nil {
		return nil, fmt.Errorf("geoknn: %w", err)
	}
	s.countOpeningRows(s.opening != nil, obs.Len())
	return withinResult(res, statsOf(st)), nil
}

// withinResult is the engine's answer as the API gives it.
func withinResult(res engine.WithinResult, st Stats) *WithinResult {
	return &WithinResult{Counts: res.Counts, Offsets: res.Offsets, Index: res.Index, DistanceRad: res.Distance, Stats: st}
}

// radiusRad turns a radius in metres into radians.
func radiusRad(metres float64) (float64, error) {
	if !(metres >= 0) || math.IsInf(metres, 1) {
		return 0, fmt.Errorf("geoknn: radius %v m: want a finite distance, 0 or more", metres)
	}
	return metres / EarthRadiusMetres, nil
}

func (s *Searcher) request(obs, ref Points) engine.Request {
	return requestFor(obs, ref, s.opts, s.prepared)
}

// requestFor is the engine's request for obs against ref (prepared as
// prepared, or nil) under opts.
func requestFor(obs, ref Points, opts Options, prepared *engine.Prepared) engine.Request {
	return engine.Request{Obs: obs.cols, Ref: ref.cols, Algorithm: engine.Algorithm(opts.Algorithm),
		BatchSize: opts.BatchSize, GridSide: opts.GridSide, Progress: opts.Progress, Trace: opts.Trace.recorder(),
		Prepared: prepared}
}

// maxDistanceRad turns a maximum distance in metres (0: none) into radians.
func maxDistanceRad(metres float64) (float64, error) {
	switch {
	case metres == 0:
		return math.Inf(1), nil
	case !(metres > 0) || math.IsInf(metres, 1):
		return 0, fmt.Errorf("geoknn: maximum distance %v m: want a positive distance, or 0 for none", metres)
	}
	return metres / EarthRadiusMetres, nil
}

// WithoutSelf returns r without each observation's own index, for queries
// of a set against itself ("the nearest other point"): asked with one
// neighbour more than wanted, each row drops the entry whose reference is
// the observation itself (or its last entry when the row holds no such
// entry, for a duplicate ranked ahead of it), leaving K-1.
func (r *KResult) WithoutSelf() *KResult {
	return r.Without(func(i int) uint32 { return uint32(i) })
}

// Without is WithoutSelf where observation i's own reference is self(i).
func (r *KResult) Without(self func(i int) uint32) *KResult {
	k := r.K - 1
	out := &KResult{K: k, Index: make([]uint32, 0, len(r.Index)/r.K*k), Stats: r.Stats}
	out.DistanceRad = make([]float32, 0, cap(out.Index))
	for i := range len(r.Index) / r.K {
		row, dist := r.Index[i*r.K:(i+1)*r.K], r.DistanceRad[i*r.K:(i+1)*r.K]
		drop := r.K - 1
		for j, ref := range row {
			if ref == self(i) {
				drop = j
				break
			}
		}
		for j := range row {
			if j != drop {
				out.Index, out.DistanceRad = append(out.Index, row[j]), append(out.DistanceRad, dist[j])
			}
		}
	}
	return out
}

// WithoutSelf returns r without each observation's own index among its
// references (a set queried against itself: every observation lies within
// any radius of itself). Without lists each count drops by one.
func (r *WithinResult) WithoutSelf() *WithinResult {
	return r.Without(func(i int) uint32 { return uint32(i) })
}

// Without is WithoutSelf where observation i's own reference is self(i).
func (r *WithinResult) Without(self func(i int) uint32) *WithinResult {
	out := &WithinResult{Counts: make([]uint32, len(r.Counts)), Stats: r.Stats}
	if r.Offsets == nil {
		for i, c := range r.Counts {
			out.Counts[i] = max(c, 1) - 1
		}
		return out
	}
	out.Offsets = make([]uint64, 1, len(r.Offsets))
	for i := range r.Counts {
		for e := r.Offsets[i]; e < r.Offsets[i+1]; e++ {
			if r.Index[e] != self(i) {
				out.Index, out.DistanceRad = append(out.Index, r.Index[e]), append(out.DistanceRad, r.DistanceRad[e])
				out.Counts[i]++
			}
		}
		out.Offsets = append(out.Offsets, uint64(len(out.Index)))
	}
	return out
}
