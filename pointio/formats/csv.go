package formats

import (
	"bufio"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/csvio"
	"github.com/geoknn/geoknn/stream"
)

// CSV is text with a header line: answers as csvio's writers write
// them (distances in metres, three decimals), points as lat,lon in the
// shortest form that reads back to the same float64.
var CSV = Format{
	Name: pointio.FormatCSV, Exts: []string{".csv", ".txt"},
	Answers: func(w *bufio.Writer, kind stream.AnswerKind, k int, _ Options) (stream.AnswerWriter, error) {
		return csvio.NewAnswerWriter(w, kind, k)
	},
	Rows:      csvRows,
	Unmatched: true,
	Points:    csvPoints, Attributes: true,
}

// csvRowsWriter is csvio's RowsWriter taking typed values.
type csvRowsWriter struct{ w *csvio.RowsWriter }

func csvRows(w *bufio.Writer, fields []arrow.Field, _ Options) (RowsWriter, error) {
	return csvRowsWriter{csvio.NewRowsWriter(w, fieldNames(fields))}, nil
}

func (c csvRowsWriter) Write(n int, rows func(i int, add func(vals ...any))) error {
	return c.w.Write(n, func(i int, add func(...string)) {
		rows(i, func(vals ...any) { add(CSVFields(vals)...) })
	})
}

func (c csvRowsWriter) Close() error { return c.w.Close() }
func (c csvRowsWriter) Abort()       {}

// CSVFields formats a row's values as the CSV answer writers do
// (distances in metres with three decimals).
func CSVFields(vals []any) []string {
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

// csvPoints writes lat,lon and the points' other columns as they were
// read.
func csvPoints(w *bufio.Writer, p Points) error {
	if len(p.Names) == 0 {
		return csvio.WritePoints(w, p.Pts)
	}
	header := append([]string{"lat", "lon"}, p.Names...)
	return csvio.WriteRows(w, header, len(p.Pts), func(i int, add func(fields ...string)) {
		fields := make([]string, 0, len(header))
		fields = append(fields, strconv.FormatFloat(p.Pts[i].Lat(), 'g', -1, 64), strconv.FormatFloat(p.Pts[i].Lon(), 'g', -1, 64))
		for c := range p.Values {
			fields = append(fields, p.Values[c][i])
		}
		add(fields...)
	})
}

// fieldNames are the fields' names, a header.
func fieldNames(fields []arrow.Field) []string {
	names := make([]string, len(fields))
	for k, f := range fields {
		names[k] = f.Name
	}
	return names
}
