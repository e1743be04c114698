package main

import (
	"context"
	"math"

	"github.com/paulmach/orb"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/internal/pipeline"
	"github.com/geoknn/geoknn/sphere"
	"github.com/geoknn/geoknn/stream"
	"github.com/geoknn/geoknn/validate"
)

// sampler keeps the --validate sample of a stream's answers as the chunks
// go by: the rows validate.SampleIndices draws when the input says how
// many rows it holds (the whole-input run's sample), else a reservoir
// sample drawn with the same seed.
type sampler struct {
	kind  stream.AnswerKind
	k     int
	first int64 // the input's row the stream starts at
	rows  *pipeline.Sample
	res   *pipeline.Reservoir
	taken []sampled // by slot
	next  int       // the next slot of rows
	local []int
	picks []pipeline.Pick
}

// sampled is one sampled observation and its answers.
type sampled struct {
	row      int64
	lat, lon float64 // radians
	refs     []uint32
	metres   []float64
	count    int
}

// newSampler is the sample --validate asks of rows rows (-1: not known
// before their end) of an input from row first on; nil when none is
// asked.
func (j *streamJob) newSampler(first, rows int64) *sampler {
	n := j.f.validate
	if n <= 0 {
		return nil
	}
	kind, k := j.f.q.Kind()
	v := &sampler{kind: kind, k: k, first: first}
	if rows >= 0 {
		sample := validate.SampleIndices(int(rows), n, j.f.seed)
		for i := range sample {
			sample[i] += int(first)
		}
		v.rows = pipeline.NewSample(sample)
	} else {
		v.res = pipeline.NewReservoir(n, j.f.seed)
	}
	return v
}

// wrap is sink, the chunk's sampled rows kept first.
func (v *sampler) wrap(sink geoknn.AnswerSink) geoknn.AnswerSink {
	if v == nil {
		return sink
	}
	return func(c stream.Chunk, a stream.Answers) error {
		v.take(c, a)
		return sink(c, a)
	}
}

// take keeps the rows of chunk c the sample takes, with their answers.
func (v *sampler) take(c stream.Chunk, a stream.Answers) {
	base := int(c.Base)
	if v.rows != nil {
		v.local = v.rows.In(v.local[:0], base, c.Len())
		for _, i := range v.local {
			v.keep(v.next, c, a, i)
			v.next++
		}
		return
	}
	v.picks = v.res.Take(v.picks[:0], base-int(v.first), c.Len()) // from the stream's first row
	for _, p := range v.picks {
		v.keep(p.Slot, c, a, p.Row)
	}
}

// keep puts chunk c's row i and its answers in slot.
func (v *sampler) keep(slot int, c stream.Chunk, a stream.Answers, i int) {
	for len(v.taken) <= slot {
		v.taken = append(v.taken, sampled{})
	}
	s := sampled{row: c.Base + int64(i), lat: c.Lat[i], lon: c.Lon[i]}
	switch v.kind {
	case stream.KindNearest:
		ref, m := a.Nearest(i)
		s.refs, s.metres = []uint32{ref}, []float64{m}
	case stream.KindKNearest:
		for r := range v.k {
			ref, m, ok := a.KRow(i, r)
			if !ok {
				break
			}
			s.refs, s.metres = append(s.refs, ref), append(s.metres, m)
		}
	default:
		s.count = a.Within.Count(i)
	}
	v.taken[slot] = s
}

// points are the sampled observations, as the engines take them.
func (v *sampler) points() geoknn.Points {
	lat, lon := make([]float64, len(v.taken)), make([]float64, len(v.taken))
	for i, s := range v.taken {
		lat[i], lon[i] = s.lat, s.lon
	}
	return geoknn.Radians64(lat, lon)
}

// check validates the sampled answers against brute force, as the
// whole-input run does, and prints the verdict.
func (j *streamJob) check(ctx context.Context, v *sampler) error {
	if v == nil {
		return nil
	}
	switch v.kind {
	case stream.KindNearest:
		return j.checkNearest(ctx, v)
	case stream.KindKNearest:
		return j.checkKNearest(ctx, v)
	}
	return j.checkWithin(ctx, v)
}

func (j *streamJob) checkNearest(ctx context.Context, v *sampler) error {
	obs := make([]orb.Point, len(v.taken))
	idx, dist := make([]uint32, len(v.taken)), make([]float32, len(v.taken))
	for i, s := range v.taken {
		obs[i] = sphere.ToDegrees(s.lat, s.lon)
		idx[i], dist[i] = s.refs[0], float32(s.metres[0]/geoknn.EarthRadiusMetres)
	}
	refPts := make([]orb.Point, j.ref.cols.Len())
	for i := range refPts {
		refPts[i] = j.ref.point(i)
	}
	rep, err := validate.Exact(ctx, obs, refPts, idx, dist)
	if err != nil {
		return err
	}
	return verdict(j.log, rep)
}

// checkKNearest compares the sampled rows with brute force on the CPU.
func (j *streamJob) checkKNearest(ctx context.Context, v *sampler) error {
	want, err := bruteK(ctx, j.f.q, v.points(), j.ref.cols, func(i int) uint32 { return uint32(v.taken[i].row) })
	if err != nil {
		return err
	}
	bad := 0
	for i, got := range v.taken {
		for r := range v.k {
			a, ma := uint32(geoknn.NoNeighbour), math.Inf(1)
			if r < len(got.refs) {
				a, ma = got.refs[r], got.metres[r]
			}
			b, mb := want.Index[i*want.K+r], want.Metres(i, r)
			if a != b && math.Abs(ma-mb) > 1 {
				bad++
			}
		}
	}
	return validated(j.log, len(v.taken)*v.k, bad)
}

// checkWithin compares the sampled counts with brute force on the CPU.
func (j *streamJob) checkWithin(ctx context.Context, v *sampler) error {
	want, err := bruteCounts(ctx, j.f.q, v.points(), j.ref.cols)
	if err != nil {
		return err
	}
	bad := 0
	for i, got := range v.taken {
		if int(want[i]) != got.count {
			bad++
		}
	}
	return validated(j.log, len(v.taken), bad)
}
