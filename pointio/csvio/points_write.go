package csvio

import (
	"bufio"
	"strconv"
	"strings"

	"github.com/paulmach/orb"
)

// WritePoints writes points as "lat,lon" rows in degrees, in the
// shortest form that reads back to the same float64 (what Read reads).
func WritePoints(w *bufio.Writer, pts []orb.Point) error {
	return writeLines(w, "lat,lon", len(pts), 1<<16, func(dst []byte, i int) []byte {
		dst = strconv.AppendFloat(dst, pts[i].Lat(), 'g', -1, 64)
		dst = append(dst, ',')
		dst = strconv.AppendFloat(dst, pts[i].Lon(), 'g', -1, 64)
		return append(dst, '\n')
	})
}

// WriteRows writes header, then the rows that rows(i, add) adds for
// each of n items, in item order, fields quoted where RFC 4180 needs it.
// It is the general writer behind answers that carry identifiers; rows is
// called from several goroutines at once.
func WriteRows(w *bufio.Writer, header []string, n int, rows func(i int, add func(fields ...string))) error {
	line := strings.TrimSuffix(string(appendCSVRecord(nil, header)), "\n")
	return writeLines(w, line, n, 1<<14, func(dst []byte, i int) []byte {
		rows(i, func(fields ...string) { dst = appendCSVRecord(dst, fields) })
		return dst
	})
}

// appendCSVRecord appends fields as one CSV line, quoting those that hold
// a comma, a quote, a line break or surrounding space.
func appendCSVRecord(dst []byte, fields []string) []byte {
	for k, f := range fields {
		if k > 0 {
			dst = append(dst, ',')
		}
		if strings.ContainsAny(f, ",\"\r\n") || strings.TrimSpace(f) != f {
			dst = append(dst, '"')
			dst = append(dst, strings.ReplaceAll(f, `"`, `""`)...)
			dst = append(dst, '"')
			continue
		}
		dst = append(dst, f...)
	}
	return append(dst, '\n')
}
