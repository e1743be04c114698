package ranks

import (
	"context"

	"github.com/paulmach/orb"

	"github.com/geoknn/geoknn/mpi"
	"github.com/geoknn/geoknn/sphere"
	"github.com/geoknn/geoknn/validate"
)

// With the ranks writing one output together, every rank checks the
// sampled answers in its range (the whole job's sample, as one process
// draws it) against brute force, before anything is written, and the
// ranks' verdicts are summed: what one process finds. A failed check
// fails every rank.

// Check is a rank's part of validating the whole job's answers.
type Check struct {
	World mpi.Comm
	// N is the observations of the whole job; Sample and Seed draw the
	// sample from them as one process does (validate.SampleIndices).
	N, Sample int
	Seed      uint64
}

// Mine is the sample's observations in the rank's n from lo, as indices
// into them.
func (c Check) Mine(lo, n int) []int {
	var mine []int
	for _, i := range validate.SampleIndices(c.N, c.Sample, c.Seed) {
		if i >= lo && i < lo+n {
			mine = append(mine, i-lo)
		}
	}
	return mine
}

// Nearest checks the rank's sampled nearest answers (index and dist: a
// row each of the rank's observations, part, from lo in the whole job)
// against every reference, refs; an error on any rank is every rank's.
// The report's failures number the observations in the whole job.
func (c Check) Nearest(ctx context.Context, part, refs Points, index []uint32, dist []float32, lo int) (validate.Report, error) {
	sel := c.Mine(lo, part.Len())
	all := make([]int, refs.Len())
	for i := range all {
		all[i] = i
	}
	idx, d := make([]uint32, len(sel)), make([]float32, len(sel))
	for k, i := range sel {
		idx[k], d[k] = index[i], dist[i]
	}
	var rep validate.Report
	var err error
	if len(sel) > 0 {
		rep, err = validate.Exact(ctx, degrees(part, sel), degrees(refs, all), idx, d)
	}
	for k := range rep.Failures {
		rep.Failures[k].Obs = lo + sel[rep.Failures[k].Obs]
	}
	return rep, AllOK(c.World, err)
}

// degrees is p's points sel as orb points (the validator's form).
func degrees(p Points, sel []int) []orb.Point {
	pts := make([]orb.Point, len(sel))
	for k, i := range sel {
		pts[k] = sphere.ToDegrees(p.At(i))
	}
	return pts
}

// SumReports is the ranks' reports summed (maxima for the maxima), at
// every rank.
func (c Check) SumReports(rep validate.Report) (validate.Report, error) {
	sums, err := c.World.SumFloat64s([]float64{float64(rep.Checked), float64(rep.IndexWrong), float64(rep.DistanceWrong), float64(rep.Ties)})
	if err != nil {
		return validate.Report{}, err
	}
	tops, err := c.World.MaxFloat64s([]float64{rep.MaxExcess, rep.MaxDistanceError})
	if err != nil {
		return validate.Report{}, err
	}
	return validate.Report{Checked: int(sums[0]), IndexWrong: int(sums[1]), DistanceWrong: int(sums[2]), Ties: int(sums[3]),
		MaxExcess: tops[0], MaxDistanceError: tops[1]}, nil
}

// Counts checks the rank's sampled answers (its n observations from lo)
// with wrong, which compares those of the sample it is given (indices
// into the rank's range; none: not called) with brute force and says how
// many it checked and found wrong. It returns the ranks' sums, at every
// rank; an error on any rank is every rank's.
func (c Check) Counts(lo, n int, wrong func(sel []int) (checked, bad int, err error)) (allChecked, allBad int, err error) {
	var checked, bad int
	if sel := c.Mine(lo, n); len(sel) > 0 {
		checked, bad, err = wrong(sel)
	}
	if err = AllOK(c.World, err); err != nil {
		return 0, 0, err
	}
	sums, err := c.World.SumFloat64s([]float64{float64(checked), float64(bad)})
	if err != nil {
		return 0, 0, err
	}
	return int(sums[0]), int(sums[1]), nil
}
