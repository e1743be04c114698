package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/internal/ranks"
)

// With --validate and the ranks writing --out together, every rank checks
// the sampled answers in its range against brute force before anything
// is written (ranks.Check); rank 0 prints the verdict one process prints.

// checker is the rank's part of --validate.
func (j *mpiJob) checker() ranks.Check {
	return ranks.Check{World: j.world, N: j.nobs, Sample: j.f.validate, Seed: j.f.seed}
}

// checkNearestPart validates the rank's sampled nearest answers.
func (j *mpiJob) checkNearestPart(ctx context.Context, in *rankInputs, res *geoknn.Result) error {
	c := j.checker()
	rep, err := c.Nearest(ctx, in.part, in.refs, res.Index, res.DistanceRad, in.lo)
	if err != nil {
		return err
	}
	for _, fl := range rep.Failures {
		fmt.Fprintf(j.stderr, "  %s\n", fl)
	}
	if rep, err = c.SumReports(rep); err != nil {
		return err
	}
	if j.Rank == 0 {
		fmt.Fprintf(j.stderr, "validate:     %s\n", rep)
	}
	if !rep.OK() {
		return errors.New("validation failed: answers beyond the 1 m tolerance")
	}
	return nil
}

// checkKPart compares the rank's sampled k-nearest rows with brute force
// on the CPU, as checkK does for one process.
func (j *mpiJob) checkKPart(ctx context.Context, in *rankInputs, res *geoknn.KResult) error {
	return j.verdict(j.checker().Counts(in.lo, in.part.Len(), func(sel []int) (int, int, error) {
		self := func(k int) uint32 { return uint32(in.lo + sel[k]) } // their indices in the whole job
		want, err := bruteK(ctx, j.f.q, sampledPoints(in.part, sel), in.refs, self)
		if err != nil {
			return 0, 0, err
		}
		return len(sel) * res.K, kRowsWrong(res, want, sel), nil
	}))
}

// checkWithinPart compares the rank's sampled radius counts with brute
// force on the CPU, as checkWithin does for one process.
func (j *mpiJob) checkWithinPart(ctx context.Context, in *rankInputs, res *geoknn.WithinResult) error {
	return j.verdict(j.checker().Counts(in.lo, in.part.Len(), func(sel []int) (int, int, error) {
		bad, err := withinWrong(ctx, j.f.q, sampledPoints(in.part, sel), in.refs, res, sel)
		return len(sel), bad, err
	}))
}

// verdict prints, at rank 0, the ranks' checked and wrong answers summed
// (ranks.Check.Counts): the verdict one process prints.
func (j *mpiJob) verdict(checked, bad int, err error) error {
	if err != nil {
		return err
	}
	w := io.Discard
	if j.Rank == 0 {
		w = j.stderr
	}
	return validated(w, checked, bad)
}
