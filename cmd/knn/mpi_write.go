package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/mpi"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/arrowio"
	"github.com/geoknn/geoknn/pointio/csvio"
	"github.com/geoknn/geoknn/stream"
)

// The ranks of run --mpi write --out together, each its own rows at their
// offsets in the one file, instead of gathering every answer to rank 0:
// .npz arrays at offsets computed from the counts (the arrays' CRCs
// combined at rank 0), CSV and Parquet parts after the ranks exchange
// their lengths: counted before writing for CSV (csvio.AnswersSize),
// so that every rank writes straight into the file; known once written
// for Parquet and for CSV with identifiers, so a rank other than rank 0
// writes its part to a file beside --out first, then copies it in (in
// the kernel, copy_file_range, where the filesystem allows). Rank 0 writes the zip structure or the
// Parquet footer, from every rank's row groups' metadata. The file is a
// temporary one of rank 0's, renamed into place only when every rank has
// written and synced its part; any failure or signal removes it. It needs
// a filesystem every rank sees (one host, or a cluster's shared one):
// --out-per-rank is for the rest.

// errAnotherRank is what a rank reports when another rank failed.
var errAnotherRank = errors.New("another rank failed to write its part of the output (its error is above)")

// errAnotherRankAnswers is the same for --out-per-rank's files.
var errAnotherRankAnswers = errors.New("another rank failed to write its answers")

// sharedFormat is --out's format where the ranks write it together, else
// "": a file, new or regular, in CSV, npz or Parquet (npz with identifier
// columns is gathered: their width is the longest id). Arrow IPC files
// are gathered: their footer lists every batch. --validate is checked by
// every rank on its range (mpi_validate.go).
func (f runFlags) sharedFormat() string {
	if f.out == "" || f.out == "-" || f.outPerRank {
		return ""
	}
	format, err := f.format()
	ids := f.obsID != "" || f.refID != ""
	if err != nil || format == pointio.FormatArrow || (ids && format == pointio.FormatNPZ) {
		return ""
	}
	if fi, err := os.Stat(f.out); err == nil && !fi.Mode().IsRegular() {
		return "" // a device or a pipe: rank 0 streams into it
	}
	return format
}

// decideShared has rank 0 decide whether the ranks write --out together,
// and tells every rank.
func (j *mpiJob) decideShared() error {
	v := []int64{0}
	if j.rank == 0 && j.f.sharedFormat() != "" {
		v[0] = 1
	}
	if err := j.world.Bcast(mpi.Bytes(v), 0); err != nil {
		return err
	}
	if v[0] == 1 {
		j.shared, _ = j.f.format()
	}
	return nil
}

// shares splits n observations among the ranks: evenly, or where they
// write one Parquet file together, in whole row groups (the last rank's
// last may be short), so that each rank's groups are one process's.
func (j *mpiJob) shares(n int) []int { return sharesFor(j.shared, n, j.size) }

// sharesFor is shares for ranks writing format together ("": not).
func sharesFor(format string, n, size int) []int {
	if format != pointio.FormatParquet {
		return mpi.Shares(n, size)
	}
	g := arrowio.GroupRows()
	counts := mpi.Shares((n+g-1)/g, size)
	slices.Reverse(counts) // the spare groups to the first ranks: rank 0 spills nothing
	left := n
	for r, groups := range counts {
		counts[r] = min(left, groups*g)
		left -= counts[r]
	}
	return counts
}

// rankPart is a rank's answers as the output's writers take them.
type rankPart struct {
	kind    stream.AnswerKind
	k       int
	a       stream.Answers
	entries int64  // the radius lists' entries
	rows    *table // the answers with identifiers (--obs-id, --ref-id)
}

func nearestPart(res *geoknn.Result, lo int) rankPart {
	return rankPart{kind: stream.KindNearest, k: 1, a: based(res.Answers(), lo)}
}

func kPart(res *geoknn.KResult, lo int) rankPart {
	return rankPart{kind: stream.KindKNearest, k: res.K, a: based(res.Answers(), lo)}
}

func withinPart(res *geoknn.WithinResult, lo int) rankPart {
	p := rankPart{kind: stream.KindWithinCounts, k: 1, a: based(res.Answers(), lo)}
	if res.Offsets != nil {
		p.kind, p.entries = stream.KindWithinLists, int64(len(res.Index))
	}
	return p
}

// based is a with its first observation numbered lo.
func based(a stream.Answers, lo int) stream.Answers {
	a.Base = lo
	return a
}

// allOK tells every rank whether every rank's step succeeded: a rank
// that failed gets its own error back, the others errAnotherRank.
func (j *mpiJob) allOK(err error) error {
	failed := 0.0
	if err != nil {
		failed = 1
	}
	anyFailed, rerr := j.world.MaxFloat64(failed)
	switch {
	case rerr != nil:
		return rerr
	case anyFailed == 0:
		return nil
	case err != nil:
		return err
	}
	return errAnotherRank
}

// sharedFile is the rank's handle on the output being written.
type sharedFile struct {
	f         *os.File
	writeback func()                // stops the rank's early write-back (pointio.StartWriteback)
	out       *pointio.SharedOutput // rank 0's
	stop      func() bool           // rank 0: stops the removal a signal makes
	name      string
}

// writeShared writes the rank's answers p into --out with the other
// ranks', all or nothing.
func (j *mpiJob) writeShared(ctx context.Context, p rankPart) error {
	t := time.Now()
	s, err := j.createShared(ctx)
	if err != nil {
		return err
	}
	defer s.close()
	if err = j.allOK(s.open()); err == nil {
		err = j.writePart(ctx, s.f, p)
	}
	if err == nil {
		err = j.allOK(s.sync())
	}
	if err = j.settle(ctx, s, err); err != nil {
		return fmt.Errorf("writing %s: %w", j.f.out, err)
	}
	j.times.write = time.Since(t)
	return nil
}

// createShared has rank 0 create the temporary file, once every rank has
// answered (a rank that failed has ended the job before any file), and
// tells every rank its name. A signal removes it.
func (j *mpiJob) createShared(ctx context.Context) (*sharedFile, error) {
	if err := j.allOK(nil); err != nil {
		return nil, err
	}
	s := &sharedFile{}
	var err error
	if j.rank == 0 {
		if s.out, err = pointio.CreateShared(j.f.out); err == nil {
			s.name, s.stop = s.out.Temp, context.AfterFunc(ctx, s.out.Remove)
		}
	}
	if err = j.allOK(err); err != nil {
		return nil, err
	}
	names, err := j.world.BcastStrings([]string{s.name}, 0)
	if err != nil {
		return nil, err
	}
	s.name = names[0]
	return s, nil
}

// open opens rank 0's temporary file.
func (s *sharedFile) open() error {
	f, err := os.OpenFile(s.name, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("rank 0's temporary output (the ranks write --out together, on a filesystem every rank sees; else use --out-per-rank): %w", err)
	}
	s.f, s.writeback = f, pointio.StartWriteback(f)
	return nil
}

// sync makes the rank's part durable before rank 0 renames the file.
func (s *sharedFile) sync() error {
	s.writeback()
	if err := s.f.Sync(); err != nil {
		return err
	}
	err := s.f.Close()
	s.f = nil
	return err
}

func (s *sharedFile) close() {
	if s.f != nil {
		s.writeback()
		s.f.Close()
	}
}

// settle ends the write as every rank found it (err, the same verdict on
// every rank): rank 0 renames the file into place, or removes it; every
// rank learns how that went before any leaves.
func (j *mpiJob) settle(ctx context.Context, s *sharedFile, err error) error {
	if j.rank == 0 {
		if err == nil && !s.stop() {
			err = context.Cause(ctx) // a signal came: the file is gone
		}
		if err == nil {
			err = s.out.Commit()
		}
		if err != nil {
			s.out.Remove()
		}
	}
	return j.allOK(err)
}

// writePart writes the rank's part in the format's way.
func (j *mpiJob) writePart(ctx context.Context, f *os.File, p rankPart) error {
	if p.rows != nil {
		return j.writeRowsPart(ctx, f, *p.rows)
	}
	switch j.shared {
	case pointio.FormatNPZ:
		return j.writeNPZPart(ctx, f, p)
	case pointio.FormatParquet:
		return j.writeParquetPart(ctx, f, p)
	}
	write := func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		aw, err := csvio.NewAnswerPartWriter(bw, p.kind, p.k, p.a.Base, j.rank == 0)
		if err == nil {
			err = aw.Write(p.a)
		}
		if err == nil {
			err = aw.Close()
		}
		return err
	}
	// Lengths counted before writing: no part spilled.
	size, err := csvio.AnswersSize(p.kind, p.k, p.a, j.rank == 0)
	return j.writeSized(ctx, f, size, err, write)
}
