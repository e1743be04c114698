package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/paulmach/orb"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/sphere"
	"github.com/geoknn/geoknn/validate"
)

// With --validate and the ranks writing --out together, every rank checks
// the sampled answers in its range (the whole run's sample, as one process
// draws it) against brute force, before anything is written; the counts
// are summed and rank 0 prints the verdict one process prints. A failed
// check fails every rank, and no output is written.

// partSample is the whole run's --validate sample that falls in the
// rank's n observations from lo, as indices into them.
func (j *mpiJob) partSample(lo, n int) []int {
	var mine []int
	for _, i := range validate.SampleIndices(j.nobs, j.f.validate, j.f.seed) {
		if i >= lo && i < lo+n {
			mine = append(mine, i-lo)
		}
	}
	return mine
}

// degrees is p as orb points (the validator's form).
func degrees(p geoknn.Points, sel []int) []orb.Point {
	pts := make([]orb.Point, len(sel))
	for k, i := range sel {
		pts[k] = sphere.ToDegrees(p.At(i))
	}
	return pts
}

// checkNearestPart validates the rank's sampled nearest answers.
func (j *mpiJob) checkNearestPart(ctx context.Context, part, refs geoknn.Points, res *geoknn.Result, lo int) error {
	sel := j.partSample(lo, part.Len())
	all := make([]int, refs.Len())
	for i := range all {
		all[i] = i
	}
	idx, dist := make([]uint32, len(sel)), make([]float32, len(sel))
	for k, i := range sel {
		idx[k], dist[k] = res.Index[i], res.DistanceRad[i]
	}
	var rep validate.Report
	var err error
	if len(sel) > 0 {
		rep, err = validate.Exact(ctx, degrees(part, sel), degrees(refs, all), idx, dist)
	}
	if err = j.allOK(err); err != nil {
		return err
	}
	for _, fl := range rep.Failures {
		fl.Obs = lo + sel[fl.Obs]
		fmt.Fprintf(j.stderr, "  %s\n", fl)
	}
	return j.reduceReport(rep)
}

// reduceReport sums the ranks' reports; rank 0 prints the verdict.
func (j *mpiJob) reduceReport(rep validate.Report) error {
	sums, err := j.world.SumFloat64s([]float64{float64(rep.Checked), float64(rep.IndexWrong), float64(rep.DistanceWrong), float64(rep.Ties)})
	if err != nil {
		return err
	}
	tops, err := j.world.MaxFloat64s([]float64{rep.MaxExcess, rep.MaxDistanceError})
	if err != nil {
		return err
	}
	all := validate.Report{Checked: int(sums[0]), IndexWrong: int(sums[1]), DistanceWrong: int(sums[2]), Ties: int(sums[3]),
		MaxExcess: tops[0], MaxDistanceError: tops[1]}
	if j.rank == 0 {
		fmt.Fprintf(j.stderr, "validate:     %s\n", all)
	}
	if !all.OK() {
		return errors.New("validation failed: answers beyond the 1 m tolerance")
	}
	return nil
}

// checkKPart compares the rank's sampled k-nearest rows with brute force
// on the CPU, as checkK does for one process.
func (j *mpiJob) checkKPart(ctx context.Context, part, refs geoknn.Points, res *geoknn.KResult, lo int) error {
	sel := j.partSample(lo, part.Len())
	want := &geoknn.KResult{}
	var err error
	if len(sel) > 0 {
		want, err = j.bruteK(ctx, sampledPoints(part, sel), refs, res.K, lo, sel)
	}
	if err = j.allOK(err); err != nil {
		return err
	}
	return j.reduceCounts(len(sel)*res.K, kRowsWrong(res, want, sel))
}

// bruteK is the brute-force k nearest of obs (the rank's observations
// lo+sel), with --max-m and --exclude-self as asked.
func (j *mpiJob) bruteK(ctx context.Context, obs, refs geoknn.Points, k, lo int, sel []int) (*geoknn.KResult, error) {
	s, err := geoknn.NewSearcher(geoknn.Options{Engine: geoknn.CPU, Algorithm: geoknn.Brute})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if j.f.excludeSelf {
		k++
	}
	want, err := s.KNearest(ctx, obs, refs, min(k, refs.Len()), j.f.maxM)
	if err != nil || !j.f.excludeSelf {
		return want, err
	}
	return want.Without(func(m int) uint32 { return uint32(lo + sel[m]) }), nil
}

// checkWithinPart compares the rank's sampled radius counts with brute
// force on the CPU, as checkWithin does for one process.
func (j *mpiJob) checkWithinPart(ctx context.Context, part, refs geoknn.Points, res *geoknn.WithinResult, lo int) error {
	sel := j.partSample(lo, part.Len())
	want := &geoknn.WithinResult{}
	var err error
	if len(sel) > 0 {
		want, err = bruteWithin(ctx, sampledPoints(part, sel), refs, j.f.withinM)
	}
	if err = j.allOK(err); err != nil {
		return err
	}
	bad := 0
	for k, i := range sel {
		c := want.Counts[k]
		if j.f.excludeSelf {
			c = max(c, 1) - 1
		}
		if c != res.Counts[i] {
			bad++
		}
	}
	return j.reduceCounts(len(sel), bad)
}

func bruteWithin(ctx context.Context, obs, refs geoknn.Points, metres float64) (*geoknn.WithinResult, error) {
	s, err := geoknn.NewSearcher(geoknn.Options{Engine: geoknn.CPU})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.WithinCount(ctx, obs, refs, metres)
}

// reduceCounts sums the ranks' checked and wrong answers; rank 0 prints
// the verdict one process prints.
func (j *mpiJob) reduceCounts(checked, bad int) error {
	sums, err := j.world.SumFloat64s([]float64{float64(checked), float64(bad)})
	if err != nil {
		return err
	}
	if j.rank == 0 {
		fmt.Fprintf(j.stderr, "validate:     %d sampled answers checked against brute force: %d wrong\n", int(sums[0]), int(sums[1]))
	}
	if sums[1] > 0 {
		return errors.New("validation failed")
	}
	return nil
}

// sampledPoints is p's points sel as float64 columns.
func sampledPoints(p geoknn.Points, sel []int) geoknn.Points {
	lat, lon := make([]float64, len(sel)), make([]float64, len(sel))
	for k, i := range sel {
		lat[k], lon[k] = p.At(i)
	}
	return geoknn.Radians64(lat, lon)
}
