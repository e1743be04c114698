package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/arrowio"
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
	vals := []any{int64(l.obsBase + i)}
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

// write writes t to path in format (CSV, NumPy, Parquet or Arrow).
func (t table) write(ctx context.Context, path string, stdout io.Writer, format string) error {
	return pointio.Write(ctx, path, stdout, func(w *bufio.Writer) error {
		switch format {
		case pointio.FormatNPZ:
			rows, cols := t.columns()
			return pointio.WriteNPZ(w, rows, cols)
		case pointio.FormatParquet, pointio.FormatArrow:
			return arrowio.WriteRows(w, format, t.fields, t.n, t.rows)
		}
		header := make([]string, len(t.fields))
		for k, f := range t.fields {
			header[k] = f.Name
		}
		return pointio.WriteCSVRows(w, header, t.n, func(i int, add func(...string)) {
			t.rows(i, func(vals ...any) { add(csvFields(vals)...) })
		})
	})
}

// csvFields formats a row's values as the other CSV writers do (distances
// in metres with three decimals).
func csvFields(vals []any) []string {
	out := make([]string, len(vals))
	for k, v := range vals {
		switch x := v.(type) {
		case float64:
			out[k] = strconv.FormatFloat(x, 'f', 3, 64)
		case string:
			out[k] = x
		default:
			out[k] = fmt.Sprint(x)
		}
	}
	return out
}

// columns gathers t's rows into one NumPy array a field (ids as
// fixed-width unicode), for .npz.
func (t table) columns() (int, []pointio.NPZColumn) {
	vals := make([][]any, len(t.fields))
	rows := 0
	for i := range t.n {
		t.rows(i, func(v ...any) {
			for k := range v {
				vals[k] = append(vals[k], v[k])
			}
			rows++
		})
	}
	cols := make([]pointio.NPZColumn, len(t.fields))
	for k, f := range t.fields {
		cols[k] = npzColumn(f.Name, vals[k])
	}
	return rows, cols
}

// npzColumn is one gathered field as a NumPy array of its type.
func npzColumn(name string, vals []any) pointio.NPZColumn {
	if len(vals) > 0 {
		if _, ok := vals[0].(string); ok {
			text := make([]string, len(vals))
			for i, v := range vals {
				text[i] = v.(string)
			}
			return pointio.StringColumn(name, text)
		}
	}
	descr, size := "<i8", 8
	if len(vals) > 0 {
		switch vals[0].(type) {
		case int32:
			descr, size = "<i4", 4
		case uint32:
			descr, size = "<u4", 4
			if name == "ref_index" {
				descr = pointio.RefIndexDescr // -1 where missing, as without ids
			}
		case float64:
			descr = "<f8"
		}
	}
	return pointio.NPZColumn{Name: name, Descr: descr, Size: size, Put: func(b []byte, i int) {
		switch x := vals[i].(type) {
		case int64:
			binary.LittleEndian.PutUint64(b, uint64(x))
		case int32:
			binary.LittleEndian.PutUint32(b, uint32(x))
		case uint32:
			binary.LittleEndian.PutUint32(b, x)
		case float64:
			binary.LittleEndian.PutUint64(b, math.Float64bits(x))
		}
	}}
}
