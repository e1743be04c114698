package main

import (
	"cmp"
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/pointio/arrowio"
	"github.com/geoknn/geoknn/pointio/formats"
	"github.com/geoknn/geoknn/stream"
)

// write streams r's answers to out ("": nowhere) in --out's format, the
// sampled answers validated before the output is committed: on an error
// (the input's, the query's, the disk's, a failed validation or a signal)
// nothing is left, and no chunk after a bad one is queried.
func (j *streamJob) write(ctx context.Context, r stream.ChunkReader, out string, stdout io.Writer) (geoknn.StreamStats, error) {
	var st geoknn.StreamStats
	var runErr error // told as it is, not as the output's write error
	finished := func() {}
	defer func() { finished() }()
	run := func(sink geoknn.AnswerSink) error {
		st, runErr = j.streamInto(ctx, r, 0, j.progress(r.Rows(), sink))
		if runErr == nil {
			j.closeEngineEarly()
			j.releaseEarly(r)
			finished = j.trace.Begin("host", "finish output") // its last bytes, sync and rename
		}
		return runErr
	}
	if out == "" {
		return st, run(func(stream.Chunk, stream.Answers) error { return nil })
	}
	format, err := j.f.output() // checked before the work
	if err != nil {
		return st, err
	}
	write := j.writeAnswers
	if j.labelled() {
		write = j.writeRows
	}
	if err := write(ctx, out, format, stdout, r.Rows(), run); err != nil {
		return st, cmp.Or(runErr, err)
	}
	fmt.Fprintf(j.log, "wrote %s (%s, %d observations) while streaming; write busy %.3f s\n", describe(out, "standard output"), format.Name, st.Rows, st.Write.Seconds())
	return st, nil
}

// progress is sink drawing the rows written on a terminal's progress
// bar, when the input says how many it holds.
func (j *streamJob) progress(rows int64, sink geoknn.AnswerSink) geoknn.AnswerSink {
	if rows <= 0 || j.bar == nil {
		return sink
	}
	j.bar.start(int(rows))
	done := 0
	return func(c stream.Chunk, a stream.Answers) error {
		err := sink(c, a)
		done += a.N
		j.bar.update(done, int(rows))
		if done >= int(rows) {
			j.bar.done()
		}
		return err
	}
}

// streamInto streams r's answers (the input's rows from first on) into
// sink, the --validate sample kept as they go by and checked after the
// last chunk, before the caller commits the output.
func (j *streamJob) streamInto(ctx context.Context, r stream.ChunkReader, first int64, sink geoknn.AnswerSink) (geoknn.StreamStats, error) {
	v := j.newSampler(first, r.Rows())
	st, err := j.x.Stream(ctx, r, v.wrap(sink), j.f.q.Streamed(streamDepth))
	if err != nil {
		return st, err
	}
	end := j.trace.Begin("host", "validate")
	defer end()
	return st, j.check(ctx, v)
}

// streamRange streams the answers of the input's rows [lo, hi) into w
// (an MPI rank's share: obs_index counts in the whole input), validated
// as streamInto does; closing or aborting w is the caller's.
func (j *streamJob) streamRange(ctx context.Context, lo, hi int64, w stream.AnswerWriter) (geoknn.StreamStats, error) {
	r, err := formats.OpenChunksRange(ctx, j.f.obs, j.f.readOptions(j.f.obsID), j.chunkRows(), lo, hi)
	if err != nil {
		return geoknn.StreamStats{}, err
	}
	defer r.Close()
	return j.streamInto(ctx, r, lo, geoknn.WriterSink(w))
}

// streamRun runs a stream into sink (and validates it).
type streamRun func(sink geoknn.AnswerSink) error

// writeAnswers writes the answers without ids through the format's
// answer writer (.npz arrays at their offsets in the output's temporary
// file, Parquet and Arrow a row group or batch at a time, CSV in blocks).
// Writer errors name the output; the run's come back as they are.
func (j *streamJob) writeAnswers(ctx context.Context, out string, format *formats.Format, stdout io.Writer, rows int64, run streamRun) error {
	kind, k := j.f.q.Kind()
	o := formats.Options{Rows: int(rows), MemoryBytes: encodeBudget(k)}
	return format.WriteAnswers(ctx, out, stdout, kind, k, o, func(w stream.AnswerWriter) error {
		if j.f.keepUnmatched {
			w = keepUnmatched{w}
		}
		sink := geoknn.WriterSink(w)
		return run(func(c stream.Chunk, a stream.Answers) error { return formats.WriterError(out, sink(c, a)) })
	})
}

// encodeBudget is the memory the Parquet and Arrow writers may hold in
// groups being encoded (at arrowio's 64 bytes an answer), which bounds
// how many are encoded at once: encodeGroups groups (arrowio.GroupItems
// observations, k answers each). A group's columns are encoded side by
// side, in about 10 ms for 2^20 answers on two cores, so sixteen groups
// at once give a many-core host's cores work. (GOMAXPROCS=32 on two
// cores, GPU-sized chunks: 1.61-1.64 GB peak with one a core, 1.13-1.25
// GB with eight groups of 2^20, 1.02-1.09 GB with four, whose stream was
// a third slower.)
func encodeBudget(k int) int {
	kind := stream.KindNearest
	if k > 1 {
		kind = stream.KindKNearest
	}
	return encodeGroups * arrowio.GroupItems(kind, k) * max(k, 1) * encodeBytesPerAnswer
}

// encodeGroups is how many groups are encoded at once (encodeBudget).
const encodeGroups = 16

// labelled reports whether the answers carry ids (--obs-id, --ref-id).
func (j *streamJob) labelled() bool { return j.f.obsID != "" || j.f.refID != "" }

// writeRows writes the answers with ids as rows, as the whole answers'
// table (labels) writes them.
func (j *streamJob) writeRows(ctx context.Context, out string, format *formats.Format, stdout io.Writer, _ int64, run streamRun) error {
	return format.WriteRows(ctx, out, stdout, j.rowFields(), formats.Options{}, func(w formats.RowsWriter) error {
		return run(func(c stream.Chunk, a stream.Answers) error {
			t := j.chunkTable(c, a)
			return formats.WriterError(out, w.Write(t.n, t.rows))
		})
	})
}

// chunkLabels are the labels of chunk c's rows.
func (j *streamJob) chunkLabels(c stream.Chunk) labels {
	l := labels{ref: j.ref.ids, obsBase: int(c.Base)}
	if j.f.obsID != "" {
		l.obs = c.IDs
		if l.obs == nil {
			l.obs = []string{}
		}
	}
	return l
}

// rowFields are the columns of the rows with ids, as labels' tables name
// them for the query's kind.
func (j *streamJob) rowFields() []arrow.Field {
	l := j.chunkLabels(stream.Chunk{})
	switch kind, k := j.f.q.Kind(); {
	case kind == stream.KindWithinCounts:
		return l.fields([]arrow.Field{{Name: "count", Type: uint32Type}}, false)
	case kind == stream.KindKNearest && k > 1:
		return l.fields([]arrow.Field{{Name: "rank", Type: arrow.PrimitiveTypes.Int32}}, true)
	}
	return l.fields(nil, true)
}

// chunkTable is chunk c's answers a as rows with ids, as labels' tables
// of the whole answers hold them.
func (j *streamJob) chunkTable(c stream.Chunk, a stream.Answers) table {
	l := j.chunkLabels(c)
	t := table{n: a.N}
	switch kind, k := j.f.q.Kind(); kind {
	case stream.KindNearest:
		t.rows = func(i int, add func(...any)) {
			ref, m := a.Nearest(i)
			add(l.row(i, nil, ref, m, true)...)
		}
	case stream.KindKNearest:
		t.rows = func(i int, add func(...any)) { kRows(l, a, k, i, add) }
	case stream.KindWithinCounts:
		t.rows = func(i int, add func(...any)) { add(l.row(i, []any{uint32(a.Within.Count(i))}, 0, 0, false)...) }
	default:
		t.rows = func(i int, add func(...any)) {
			for r := range a.Within.Count(i) {
				ref, m := a.Within.Ref(i, r)
				add(l.row(i, nil, ref, m, true)...)
			}
		}
	}
	return t
}

// kRows adds observation i's k nearest as rows, ranked from 1 (no rank
// with k = 1), as labels.kNearest does.
func kRows(l labels, a stream.Answers, k, i int, add func(...any)) {
	for r := range k {
		ref, m, ok := a.KRow(i, r)
		if !ok {
			return
		}
		var middle []any
		if k > 1 {
			middle = []any{int32(r + 1)}
		}
		add(l.row(i, middle, ref, m, true)...)
	}
}

// keepUnmatched is a CSV answer writer that gives every observation of a
// --within-m --list a row (--keep-unmatched).
type keepUnmatched struct{ stream.AnswerWriter }

func (k keepUnmatched) Write(a stream.Answers) error {
	a.Within.KeepUnmatched = true
	return k.AnswerWriter.Write(a)
}
