package pointio

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/paulmach/orb"
)

// WritePointsCSV writes points as "lat,lon" rows in degrees, in the
// shortest form that reads back to the same float64 (what ReadCSV reads).
func WritePointsCSV(w *bufio.Writer, pts []orb.Point) error {
	return writeLines(w, "lat,lon", len(pts), 1<<16, func(dst []byte, i int) []byte {
		dst = strconv.AppendFloat(dst, pts[i].Lat(), 'g', -1, 64)
		dst = append(dst, ',')
		dst = strconv.AppendFloat(dst, pts[i].Lon(), 'g', -1, 64)
		return append(dst, '\n')
	})
}

// WritePointsNPZ writes points as a NumPy archive of two float64 arrays
// of degrees, "lat" and "lon" (what readNPZ reads).
func WritePointsNPZ(w io.Writer, pts []orb.Point) error {
	column := func(name string, at int) npyArray {
		return npyArray{NPZColumn{name, "<f8", 8, func(b []byte, i int) {
			binary.LittleEndian.PutUint64(b, math.Float64bits(pts[i][at]))
		}}, len(pts), ""}
	}
	return writeArchive(w, []npyArray{column("lat", 1), column("lon", 0)})
}

// WritePointsNPY writes points as one NumPy array of shape (N, 2), a row
// of latitude then longitude in degrees (float64), what numpy.load reads.
func WritePointsNPY(w io.Writer, pts []orb.Point) error {
	if _, err := io.WriteString(w, npyHeaderShape("<f8", fmt.Sprintf("(%d, 2)", len(pts)))); err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	err := writeBlocks(w, len(pts), npyChunk, func(dst []byte, lo, hi int) ([]byte, error) {
		for _, p := range pts[lo:hi] {
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(p.Lat()))
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(p.Lon()))
		}
		return dst, nil
	})
	if err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	return nil
}

// WriteCSVRows writes header, then the rows that rows(i, add) adds for
// each of n items, in item order, fields quoted where RFC 4180 needs it.
// It is the general writer behind answers that carry identifiers; rows is
// called from several goroutines at once.
func WriteCSVRows(w *bufio.Writer, header []string, n int, rows func(i int, add func(fields ...string))) error {
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
