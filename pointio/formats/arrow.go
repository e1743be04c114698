package formats

import (
	"bufio"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/arrowio"
	"github.com/geoknn/geoknn/stream"
)

// Parquet is a Parquet file of typed columns (package arrowio): answers
// a row group of arrowio.GroupItems observations at a time.
var Parquet = columnar(pointio.FormatParquet, ".parquet")

// Arrow is an Arrow IPC file (Feather version 2), laid out as Parquet's
// columns.
var Arrow = columnar(pointio.FormatArrow, ".arrow", ".feather")

// columnar is the entry of one of arrowio's formats, which differ only
// in their name.
func columnar(name string, exts ...string) Format {
	return Format{
		Name: name, Exts: exts,
		Answers: func(w *bufio.Writer, kind stream.AnswerKind, k int, o Options) (stream.AnswerWriter, error) {
			return arrowio.NewAnswerWriter(w, name, kind, k, arrowio.StreamOptions{MemoryBytes: o.MemoryBytes})
		},
		Rows: func(w *bufio.Writer, fields []arrow.Field, o Options) (RowsWriter, error) {
			return arrowio.NewRowsWriter(w, name, fields, arrowio.StreamOptions{MemoryBytes: o.MemoryBytes})
		},
		Points:     func(w *bufio.Writer, p Points) error { return columnarPoints(w, name, p) },
		Attributes: true,
	}
}

// columnarPoints writes lat and lon doubles and the points' other
// columns typed (columnTypes).
func columnarPoints(w *bufio.Writer, name string, p Points) error {
	if len(p.Names) == 0 {
		return arrowio.WritePoints(w, name, p.Pts)
	}
	types := columnTypes(p.Values)
	fields := []arrow.Field{{Name: "lat", Type: arrow.PrimitiveTypes.Float64}, {Name: "lon", Type: arrow.PrimitiveTypes.Float64}}
	for c, n := range p.Names {
		fields = append(fields, arrow.Field{Name: n, Type: types[c]})
	}
	return arrowio.WriteRows(w, name, fields, len(p.Pts), func(i int, add func(vals ...any)) {
		vals := make([]any, 0, len(fields))
		vals = append(vals, p.Pts[i].Lat(), p.Pts[i].Lon())
		for c := range p.Values {
			vals = append(vals, typedValue(types[c], p.Values[c][i]))
		}
		add(vals...)
	})
}

// columnTypes chooses each text column's type in Parquet and Arrow:
// int64 where every value is a whole number, float64 where every value is
// a number, else text (an empty value keeps a column text, as it could not
// be told from a missing one).
func columnTypes(values [][]string) []arrow.DataType {
	types := make([]arrow.DataType, len(values))
	for c, vals := range values {
		types[c] = columnType(vals)
	}
	return types
}

// columnType is columnTypes's choice for one column.
func columnType(vals []string) arrow.DataType {
	ints, floats := len(vals) > 0, len(vals) > 0
	for _, v := range vals {
		if ints {
			_, err := strconv.ParseInt(v, 10, 64)
			ints = err == nil
		}
		if !ints {
			_, err := strconv.ParseFloat(v, 64)
			floats = err == nil
		}
		if !floats {
			break
		}
	}
	switch {
	case ints:
		return arrow.PrimitiveTypes.Int64
	case floats:
		return arrow.PrimitiveTypes.Float64
	}
	return arrow.BinaryTypes.String
}

// typedValue is v as the type columnTypes chose.
func typedValue(t arrow.DataType, v string) any {
	switch t.ID() {
	case arrow.INT64:
		n, _ := strconv.ParseInt(v, 10, 64)
		return n
	case arrow.FLOAT64:
		x, _ := strconv.ParseFloat(v, 64)
		return x
	}
	return v
}
