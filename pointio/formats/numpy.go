package formats

import (
	"bufio"
	"encoding/binary"
	"io"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/numpyio"
	"github.com/geoknn/geoknn/stream"
)

// NPZ is a NumPy archive (numpy.savez's layout): answers as arrays that
// keep their shape (ref_index -1 and distance inf where missing), points
// as lat and lon arrays of degrees.
var NPZ = Format{
	Name: pointio.FormatNPZ, Exts: []string{".npz"},
	Answers: func(w *bufio.Writer, kind stream.AnswerKind, k int, o Options) (stream.AnswerWriter, error) {
		return numpyio.NewNPZAnswerWriter(w, kind, k, o.Rows, o.Dir)
	},
	AnswersAt: func(f io.WriterAt, kind stream.AnswerKind, k int, o Options) (stream.AnswerWriter, error) {
		return numpyio.NewNPZAnswerWriterAt(f, kind, k, o.Rows, o.Dir)
	},
	Rows: func(w *bufio.Writer, fields []arrow.Field, _ Options) (RowsWriter, error) {
		return &npzRows{w: w, fields: fields, vals: make([][]any, len(fields))}, nil
	},
	RowsWhole: true,
	Points:    func(w *bufio.Writer, p Points) error { return numpyio.WritePointsNPZ(w, p.Pts) },
}

// npzRows gathers rows into one NumPy array a field (text as fixed-width
// unicode, whose width is known only at the end), written by Close.
type npzRows struct {
	w      io.Writer
	fields []arrow.Field
	vals   [][]any
	rows   int
}

func (z *npzRows) Write(n int, rows func(i int, add func(vals ...any))) error {
	for i := range n {
		rows(i, func(v ...any) {
			for k := range v {
				z.vals[k] = append(z.vals[k], v[k])
			}
			z.rows++
		})
	}
	return nil
}

func (z *npzRows) Close() error {
	cols := make([]numpyio.NPZColumn, len(z.fields))
	for k, f := range z.fields {
		cols[k] = npzColumn(f.Name, z.vals[k])
	}
	return numpyio.WriteNPZ(z.w, z.rows, cols)
}

func (z *npzRows) Abort() { z.vals = nil }

// npzColumn is one gathered field as a NumPy array of its type.
func npzColumn(name string, vals []any) numpyio.NPZColumn {
	if len(vals) > 0 {
		if _, ok := vals[0].(string); ok {
			text := make([]string, len(vals))
			for i, v := range vals {
				text[i] = v.(string)
			}
			return numpyio.StringColumn(name, text)
		}
	}
	descr, size := npzType(name, vals)
	return numpyio.NPZColumn{Name: name, Descr: descr, Size: size, Put: func(b []byte, i int) {
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

// npzType is the NumPy type of a column of vals (int64 when empty).
func npzType(name string, vals []any) (descr string, size int) {
	if len(vals) == 0 {
		return "<i8", 8
	}
	switch vals[0].(type) {
	case int32:
		return "<i4", 4
	case uint32:
		if name == "ref_index" {
			return numpyio.RefIndexDescr, 4 // -1 where missing, as without ids
		}
		return "<u4", 4
	case float64:
		return "<f8", 8
	}
	return "<i8", 8
}

// NPY is one NumPy array of shape (N, 2), latitude then longitude in
// degrees: points only.
var NPY = Format{
	Name: pointio.FormatNPY, Exts: []string{".npy"},
	Points: func(w *bufio.Writer, p Points) error { return numpyio.WritePointsNPY(w, p.Pts) },
}
