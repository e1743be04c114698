package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/internal/sysmem"
	"github.com/geoknn/geoknn/stream"
	"github.com/geoknn/geoknn/validate"
)

// runNeighbours answers knn run's k-nearest and radius queries: the query,
// its report, then the kind's finish (the sampled validation and --out).
func runNeighbours(ctx context.Context, f runFlags, in *runInputs, stdout, stderr io.Writer) error {
	t := time.Now()
	if err := checkListsMemory(ctx, in.s, in.obs.cols, in.ref.cols, f.q); err != nil {
		return err
	}
	a, err := in.answer(ctx, f.q)
	if err != nil {
		return err
	}
	st := a.Stats()
	fmt.Fprintf(stderr, "engine:       %s (%s)\nquery:        %.3f s; %s\n", st.Engine, strings.Join(st.Devices, ", "), time.Since(t).Seconds(), f.querySummary(in.ref.cols.Len()))
	if st.Kernel > 0 {
		fmt.Fprintf(stderr, "kernels:      GPU %.1f ms (index %.2f ms), %d jobs, %d refined in float64\n",
			ms(st.Kernel), ms(st.Index), st.Jobs, st.Refined)
	}
	return answeredOf(ctx, f, stdout, stderr, a).finish(in, f)
}

// answer answers q, a k-nearest query into the answers' memory made
// while the engine started where there is one.
func (in *runInputs) answer(ctx context.Context, q geoknn.Query) (*geoknn.Answer, error) {
	if in.kres == nil {
		return in.s.Answer(ctx, in.obs.cols, in.ref.cols, q)
	}
	if err := in.s.KNearestInto(ctx, in.obs.cols, in.ref.cols, q.MaxMetres, in.kres); err != nil {
		return nil, err
	}
	a := &geoknn.Answer{Kind: stream.KindKNearest, K: in.kres}
	if q.ExcludeSelf {
		a.K = a.K.WithoutSelf()
	}
	return a, nil
}

// checkK refuses a --k above the nref references there are (less the
// observation's own with --exclude-self, when the engine is asked one
// more: Query.Asked) as a usage error, as the API refuses such a k: the
// user learns that the rows would hold fewer than k answers.
func (f runFlags) checkK(nref int) error {
	switch {
	case f.q.Asked() <= nref:
		return nil
	case f.excludeSelf:
		return usagef("run: --k %d with --exclude-self: more than the %d references other than each observation itself", f.k, nref-1)
	}
	return usagef("run: --k %d: more than the %d references", f.k, nref)
}

// sampleObs draws n of the observations (all when there are fewer) and
// their indices, as validateSample does.
func sampleObs(in *runInputs, n int, seed uint64) (geoknn.Points, []int) {
	idx := validate.SampleIndices(in.obs.cols.Len(), n, seed)
	return sampledPoints(in.obs.cols, idx), idx
}

// sampledPoints is p's points sel as float64 columns.
func sampledPoints(p geoknn.Points, sel []int) geoknn.Points {
	lat, lon := make([]float64, len(sel)), make([]float64, len(sel))
	for k, i := range sel {
		lat[k], lon[k] = p.At(i)
	}
	return geoknn.Radians64(lat, lon)
}

// checkK compares sampled rows with brute force on the CPU.
func checkK(ctx context.Context, in *runInputs, f runFlags, res *geoknn.KResult) error {
	obs, idx := sampleObs(in, f.validate, f.seed)
	want, err := bruteK(ctx, f.q, obs, in.ref.cols, func(j int) uint32 { return uint32(idx[j]) })
	if err != nil {
		return err
	}
	return validated(in.log, len(idx)*res.K, kRowsWrong(res, want, idx))
}

// bruteK is q's k nearest of obs by brute force on the CPU, with its
// distance limit and, with ExcludeSelf, without observation j's own
// reference self(j).
func bruteK(ctx context.Context, q geoknn.Query, obs, refs geoknn.Points, self func(j int) uint32) (*geoknn.KResult, error) {
	s, err := geoknn.NewSearcher(geoknn.Options{Engine: geoknn.CPU, Algorithm: geoknn.Brute})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	want, err := s.KNearest(ctx, obs, refs, min(q.Asked(), refs.Len()), q.MaxMetres)
	if err != nil || !q.ExcludeSelf {
		return want, err
	}
	return want.Without(self), nil
}

// kRowsWrong counts the answers in res's rows (want's rows, in order)
// that are not want's reference and are off its distance by over 1 m.
func kRowsWrong(res, want *geoknn.KResult, rows []int) int {
	bad := 0
	for j, i := range rows {
		for r := range res.K {
			a, b := res.Index[i*res.K+r], want.Index[j*res.K+r]
			da, db := float64(res.DistanceRad[i*res.K+r]), float64(want.DistanceRad[j*res.K+r])
			if a != b && math.Abs(da-db)*geoknn.EarthRadiusMetres > 1 {
				bad++
			}
		}
	}
	return bad
}

// checkWithin compares sampled counts with brute force on the CPU.
func checkWithin(ctx context.Context, in *runInputs, f runFlags, res *geoknn.WithinResult) error {
	obs, idx := sampleObs(in, f.validate, f.seed)
	bad, err := withinWrong(ctx, f.q, obs, in.ref.cols, res, idx)
	if err != nil {
		return err
	}
	return validated(in.log, len(idx), bad)
}

// withinWrong counts res's counts at rows (of obs, in order) that differ
// from brute force on the CPU (bruteCounts).
func withinWrong(ctx context.Context, q geoknn.Query, obs, refs geoknn.Points, res *geoknn.WithinResult, rows []int) (int, error) {
	want, err := bruteCounts(ctx, q, obs, refs)
	if err != nil {
		return 0, err
	}
	bad := 0
	for j, i := range rows {
		if want[j] != res.Counts[i] {
			bad++
		}
	}
	return bad, nil
}

// bruteCounts is q's radius counts of obs on the CPU, less the
// observation itself with ExcludeSelf.
func bruteCounts(ctx context.Context, q geoknn.Query, obs, refs geoknn.Points) ([]uint32, error) {
	s, err := geoknn.NewSearcher(geoknn.Options{Engine: geoknn.CPU})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	want, err := s.WithinCount(ctx, obs, refs, q.RadiusMetres)
	if err != nil {
		return nil, err
	}
	if q.ExcludeSelf {
		want = want.WithoutSelf() // a count less one, whatever the index
	}
	return want.Counts, nil
}

func validated(w io.Writer, checked, bad int) error {
	fmt.Fprintf(w, "validate:     %d sampled answers checked against brute force: %d wrong\n", checked, bad)
	if bad > 0 {
		return errors.New("validation failed")
	}
	return nil
}

// within is the radius query q (counts, or lists), each observation's
// own reference left in (the caller knows its index).
func within(ctx context.Context, s *geoknn.Searcher, obs, ref geoknn.Points, q geoknn.Query) (*geoknn.WithinResult, error) {
	if err := checkListsMemory(ctx, s, obs, ref, q); err != nil {
		return nil, err
	}
	if q.List {
		return s.WithinList(ctx, obs, ref, q.RadiusMetres)
	}
	return s.WithinCount(ctx, obs, ref, q.RadiusMetres)
}

// checkListsMemory refuses, before they are found, q's radius lists held
// whole (observations not streamed from a file) that would take more
// memory than is available: a huge radius at 2^24 x 2^12 asks for 1.6 TB
// (#41 C4). Where every observation's list holding every reference fits,
// nothing is counted; else the counts are found first (a pass that holds
// 4 bytes an observation) and their sum decides.
func checkListsMemory(ctx context.Context, s *geoknn.Searcher, obs, ref geoknn.Points, q geoknn.Query) error {
	avail, ok := sysmem.Available()
	most := uint64(obs.Len()) * uint64(ref.Len()) * geoknn.ListEntryBytes
	if kind, _ := q.Kind(); kind != stream.KindWithinLists || !ok || most <= avail/2 {
		return nil
	}
	metres := q.RadiusMetres
	counts, err := s.WithinCount(ctx, obs, ref, metres)
	if err != nil {
		return err
	}
	entries := uint64(0)
	for _, c := range counts.Counts {
		entries += uint64(c)
	}
	if need := entries * geoknn.ListEntryBytes; need > avail {
		return fmt.Errorf("--within-m %g --list: %d list entries need about %s of memory (%d bytes each), more than the %s available: "+
			"use a smaller radius, counts (no --list), or observations from a file, whose lists are streamed",
			metres, entries, bytesText(need), geoknn.ListEntryBytes, bytesText(avail))
	}
	return nil
}
