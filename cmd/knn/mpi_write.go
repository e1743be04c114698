package main

import (
	"context"
	"time"

	"github.com/geoknn/geoknn/internal/ranks"
	"github.com/geoknn/geoknn/pointio/formats"
)

// The ranks of run --mpi write --out together where they can
// (ranks.Output): each its own rows at their offsets in the one file,
// instead of gathering every answer to rank 0. These hand it the rank's
// answers and their rows with identifiers.

// writeShared writes the rank's answers p into --out with the other
// ranks', all or nothing, timing the rank's part.
func (j *mpiJob) writeShared(ctx context.Context, p ranks.Part) error {
	t := time.Now()
	out := &ranks.Output{World: j.world, Rank: j.Rank, Size: j.Size, Path: j.f.out, Format: j.shared, N: j.nobs}
	if err := out.Write(ctx, p); err != nil {
		return err
	}
	j.times.Write, j.times.Wrote = time.Since(t), true
	return nil
}

// rankRows is t as the ranks' output writes answers with identifiers:
// typed values, and the CSV writers' text of them.
func (t table) rankRows() *ranks.Rows {
	return &ranks.Rows{Fields: t.fields, N: t.n, Values: t.rows, Text: func(i int, add func(...string)) {
		t.rows(i, func(vals ...any) { add(formats.CSVFields(vals)...) })
	}}
}
