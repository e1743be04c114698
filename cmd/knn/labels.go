package main

import (
	"context"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/pointio/formats"
	"github.com/geoknn/geoknn/stream"
)

// labels are the identifiers --obs-id and --ref-id carry into the answers:
// a column each next to obs_index and ref_index.
type labels struct {
	obs, ref []string
	// obsBase is added to every obs_index: the rows are a range of the
	// whole set's (an MPI rank's, --out-per-rank).
	obsBase int
}

func (l labels) any() bool { return l.obs != nil || l.ref != nil }

// table is an answer as rows of typed values: what the labelled writers
// (CSV, Parquet, Arrow) write.
type table struct {
	fields []arrow.Field
	n      int
	rows   func(i int, add func(vals ...any))
}

var (
	int64Type   = arrow.PrimitiveTypes.Int64
	uint32Type  = arrow.PrimitiveTypes.Uint32
	float64Type = arrow.PrimitiveTypes.Float64
	stringType  = arrow.BinaryTypes.String
)

// row builds one row: obs_index[, obs_id], the middle values, and when
// ref is given ref_index[, ref_id] and distance_m.
func (l labels) row(i int, middle []any, ref uint32, metres float64, withRef bool) []any {
	vals := make([]any, 1, 5+len(middle)) // one allocation: the row grows no further
	vals[0] = int64(l.obsBase + i)
	if l.obs != nil {
		vals = append(vals, l.obs[i])
	}
	vals = append(vals, middle...)
	if withRef {
		vals = append(vals, ref)
		if l.ref != nil {
			vals = append(vals, l.ref[ref])
		}
		vals = append(vals, metres)
	}
	return vals
}

// fields names the columns of row.
func (l labels) fields(middle []arrow.Field, withRef bool) []arrow.Field {
	fs := []arrow.Field{{Name: "obs_index", Type: int64Type}}
	if l.obs != nil {
		fs = append(fs, arrow.Field{Name: "obs_id", Type: stringType})
	}
	fs = append(fs, middle...)
	if withRef {
		fs = append(fs, arrow.Field{Name: "ref_index", Type: uint32Type})
		if l.ref != nil {
			fs = append(fs, arrow.Field{Name: "ref_id", Type: stringType})
		}
		fs = append(fs, arrow.Field{Name: "distance_m", Type: float64Type})
	}
	return fs
}

// answer is a's table, by its kind.
func (l labels) answer(a *geoknn.Answer) table {
	switch a.Kind {
	case stream.KindNearest:
		return l.nearest(a.Nearest)
	case stream.KindKNearest:
		return l.kNearest(a.K)
	}
	return l.within(a.Within)
}

func (l labels) nearest(res *geoknn.Result) table {
	return table{fields: l.fields(nil, true), n: len(res.Index), rows: func(i int, add func(...any)) {
		add(l.row(i, nil, res.Index[i], res.Metres(i), true)...)
	}}
}

// kNearest lists the answers found, a row each, ranked from 1 (with k = 1
// no rank column, as the nearest query's output has none).
func (l labels) kNearest(res *geoknn.KResult) table {
	rank := []arrow.Field{{Name: "rank", Type: arrow.PrimitiveTypes.Int32}}
	if res.K == 1 {
		rank = nil
	}
	return table{fields: l.fields(rank, true), n: len(res.Index) / max(res.K, 1), rows: func(i int, add func(...any)) {
		for r := range res.K {
			if res.Index[i*res.K+r] == geoknn.NoNeighbour {
				return
			}
			var middle []any
			if res.K > 1 {
				middle = []any{int32(r + 1)}
			}
			add(l.row(i, middle, res.Index[i*res.K+r], res.Metres(i, r), true)...)
		}
	}}
}

func (l labels) within(res *geoknn.WithinResult) table {
	if res.Offsets == nil {
		count := []arrow.Field{{Name: "count", Type: uint32Type}}
		return table{fields: l.fields(count, false), n: len(res.Counts), rows: func(i int, add func(...any)) {
			add(l.row(i, []any{res.Counts[i]}, 0, 0, false)...)
		}}
	}
	return table{fields: l.fields(nil, true), n: len(res.Counts), rows: func(i int, add func(...any)) {
		for e := res.Offsets[i]; e < res.Offsets[i+1]; e++ {
			add(l.row(i, nil, res.Index[e], float64(res.DistanceRad[e])*geoknn.EarthRadiusMetres, true)...)
		}
	}}
}

// write writes t to path in the format named format (an MPI rank's
// --out-per-rank), as writeTo does.
func (t table) write(ctx context.Context, path string, stdout io.Writer, format string) error {
	out, err := formats.Named(format)
	if err != nil {
		return err
	}
	return t.writeTo(ctx, path, stdout, out)
}

// writeTo writes t to path in out's format, one chunk of rows.
func (t table) writeTo(ctx context.Context, path string, stdout io.Writer, out *formats.Format) error {
	return out.WriteRows(ctx, path, stdout, t.fields, formats.Options{}, func(w formats.RowsWriter) error {
		return formats.WriterError(path, w.Write(t.n, t.rows))
	})
}
