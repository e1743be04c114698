package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/arrowio"
	"github.com/geoknn/geoknn/pointio/formats"
)

// attributes are the columns of a points file beside its coordinates
// (ids, names, populations), as text, one slice a column in row order:
// what knn convert carries into formats that hold them.
type attributes struct {
	names  []string
	values [][]string
}

// attributeColumns names the columns of in other than its coordinates:
// CSV (.gz too), Parquet and Arrow files have them; GeoJSON, NumPy,
// standard input and other pipes give none: a pipe can be opened and read
// only once, by the points' reader (opening it here would also wait for
// a writer where no signal could stop it).
func attributeColumns(in string, opts pointio.ReadOptions) ([]string, error) {
	var names []string
	var text []bool
	switch {
	case in == "-" || isNumPy(in) || pointio.IsSpecial(in):
		return nil, nil
	case arrowio.Handles(in):
		var err error
		if names, text, err = arrowio.Columns(in); err != nil {
			return nil, err
		}
	default:
		lower := strings.ToLower(strings.TrimSuffix(strings.ToLower(in), ".gz"))
		if strings.HasSuffix(lower, ".json") || strings.HasSuffix(lower, ".geojson") {
			return nil, nil
		}
		var err error
		if names, err = csvHeader(in); err != nil || names == nil {
			return nil, err
		}
		text = make([]bool, len(names))
		for i := range text {
			text[i] = true
		}
	}
	lat, lon, err := pointio.LatLonColumns(in, names, opts)
	if err != nil {
		// A GeoParquet file's points are its geometry column, which is
		// not text: every other text column is an attribute.
		lat, lon = -1, -1
	}
	var attrs []string
	for i, n := range names {
		if i != lat && i != lon && text[i] && n != "" {
			attrs = append(attrs, n)
		}
	}
	return attrs, nil
}

// csvHeader is the first record of a CSV file (gzip-compressed or not),
// with the delimiter the readers sniff; nil for a file that is not CSV
// (its reader says why).
func csvHeader(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil // the points' reader reports it
	}
	defer f.Close()
	var r io.Reader = f
	br := bufio.NewReader(f)
	if head, _ := br.Peek(2); bytes.Equal(head, []byte{0x1f, 0x8b}) {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil
		}
		r = gz
	} else {
		r = br
	}
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && line == "" {
		return nil, nil
	}
	line = strings.TrimPrefix(line, "\ufeff")
	delim, most := ',', 0
	for _, d := range []rune{',', ';', '\t', '|'} {
		if n := strings.Count(line, string(d)); n > most {
			delim, most = d, n
		}
	}
	cr := csv.NewReader(strings.NewReader(line))
	cr.Comma = delim
	cr.LazyQuotes = true
	rec, err := cr.Read()
	if err != nil {
		return nil, nil
	}
	for i := range rec {
		rec[i] = strings.TrimSpace(rec[i])
	}
	return rec, nil
}

// readAttributes reads each named column's values through the points'
// readers (the id column they carry into answers), so every value is the
// one knn run's --obs-id and --ref-id would give: a pass over the file a
// column, which convert, run once a file, can afford.
func readAttributes(ctx context.Context, in string, opts pointio.ReadOptions, names []string, rows int) (attributes, error) {
	a := attributes{names: names}
	for _, n := range names {
		o := opts
		o.IDColumn = n
		_, ids, err := formats.ReadPoints(ctx, in, o)
		if err != nil {
			return a, err
		}
		if len(ids) != rows {
			return a, fmt.Errorf("convert: column %q of %s holds %d values for %d points", n, in, len(ids), rows)
		}
		a.values = append(a.values, ids)
	}
	return a, nil
}
