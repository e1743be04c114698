package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/arrowio"
	"github.com/paulmach/orb"
)

const convertUsage = `Usage: knn convert [flags] IN OUT

Reads the points of IN (CSV, GeoJSON, Parquet/GeoParquet, Arrow, NumPy; - for
standard input) and writes them to OUT as latitude and longitude in degrees,
in the format its extension names: .csv (lat,lon, every digit that reads back
to the same float64), .parquet or .arrow (lat, lon doubles), .npy (N, 2) or
.npz (lat, lon arrays). Bad input is refused as knn run refuses it; OUT is
written whole or not at all, and never over IN.

Every other column of a CSV, Parquet or Arrow file (ids, names, counts) is
kept after lat and lon, so that knn run --obs-id and --ref-id find it in OUT:
in Parquet and Arrow as int64 where every value is a whole number, float64
where every value is a number, else text. NumPy holds numbers only, so .npy
and .npz get lat and lon, and convert says which columns it left out;
--coords-only leaves them out everywhere. GeoJSON properties and standard
input give no columns beyond the points.

Example:
  knn convert airports.csv airports.parquet     (lat, lon, iata, name)
  zcat points.csv.gz | knn convert - points.npy

Flags:
`

// cmdConvert converts a file of points from one format to another.
func cmdConvert(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	var opts pointio.ReadOptions
	fs.StringVar(&opts.LatColumn, "lat-col", "", "the latitude column's name, where the input has it")
	fs.StringVar(&opts.LonColumn, "lon-col", "", "the longitude column's name, where the input has it")
	fs.BoolVar(&opts.Radians, "radians", false, "a NumPy input holds radians, not degrees")
	coordsOnly := fs.Bool("coords-only", false, "write lat and lon only, leaving out the input's other columns")
	files, helped, err := parseFlagsAndFiles(fs, convertUsage, args, stdout, stderr)
	if helped || err != nil {
		return err
	}
	if len(files) != 2 {
		return usagef("convert: want IN and OUT, got %d file arguments", len(files))
	}
	in, out := files[0], files[1]
	if in == "" || out == "" {
		return usagef("convert: an empty file name (- is standard input or output)")
	}
	if opts.Radians && !isNumPy(in) {
		return usagef("convert: --radians is for NumPy inputs (.npy, .npz), not %s", in)
	}
	write, err := pointsWriter(out)
	if err != nil {
		return usageError{err}
	}
	if err := pointio.CheckOutput(out, in); err != nil {
		return err
	}
	var names []string
	if !*coordsOnly {
		if names, err = attributeColumns(in, opts); err != nil {
			return err
		}
	}
	pts, _, err := readDegrees(ctx, in, opts)
	if err != nil {
		return err
	}
	attrs := attributes{}
	if isNumPy(out) {
		if len(names) > 0 {
			fmt.Fprintf(stderr, "knn convert: %s holds numbers only: left out the columns %s (kept in .csv, .parquet, .arrow)\n", out, strings.Join(names, ", "))
		}
	} else if attrs, err = readAttributes(ctx, in, opts, names, len(pts)); err != nil {
		return err
	}
	if err := pointio.Write(ctx, out, stdout, func(w *bufio.Writer) error { return write(w, pts, attrs) }); err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	cols := "lat, lon"
	if len(attrs.names) > 0 {
		cols += ", " + strings.Join(attrs.names, ", ")
	}
	fmt.Fprintf(stderr, "wrote %s (%d points; columns %s)\n", describeOut(out), len(pts), cols)
	return nil
}

// pointsWriter is the writer of points, and of the attribute columns
// where the format holds text, for out's extension.
func pointsWriter(out string) (func(w *bufio.Writer, pts []orb.Point, a attributes) error, error) {
	switch ext := strings.ToLower(filepath.Ext(out)); ext {
	case ".csv", ".txt", "":
		return func(w *bufio.Writer, pts []orb.Point, a attributes) error {
			if len(a.names) == 0 {
				return pointio.WritePointsCSV(w, pts)
			}
			header := append([]string{"lat", "lon"}, a.names...)
			return pointio.WriteCSVRows(w, header, len(pts), func(i int, add func(fields ...string)) {
				fields := make([]string, 0, len(header))
				fields = append(fields, strconv.FormatFloat(pts[i].Lat(), 'g', -1, 64), strconv.FormatFloat(pts[i].Lon(), 'g', -1, 64))
				for c := range a.values {
					fields = append(fields, a.values[c][i])
				}
				add(fields...)
			})
		}, nil
	case ".npy":
		return func(w *bufio.Writer, pts []orb.Point, _ attributes) error { return pointio.WritePointsNPY(w, pts) }, nil
	case ".npz":
		return func(w *bufio.Writer, pts []orb.Point, _ attributes) error { return pointio.WritePointsNPZ(w, pts) }, nil
	case ".parquet", ".arrow", ".feather":
		format, _ := pointio.OutputFormat(out)
		return func(w *bufio.Writer, pts []orb.Point, a attributes) error {
			if len(a.names) == 0 {
				return arrowio.WritePoints(w, format, pts)
			}
			types := a.arrowTypes()
			fields := []arrow.Field{{Name: "lat", Type: arrow.PrimitiveTypes.Float64}, {Name: "lon", Type: arrow.PrimitiveTypes.Float64}}
			for c, n := range a.names {
				fields = append(fields, arrow.Field{Name: n, Type: types[c]})
			}
			return arrowio.WriteRows(w, format, fields, len(pts), func(i int, add func(vals ...any)) {
				vals := make([]any, 0, len(fields))
				vals = append(vals, pts[i].Lat(), pts[i].Lon())
				for c := range a.values {
					vals = append(vals, a.value(types[c], c, i))
				}
				add(vals...)
			})
		}, nil
	default:
		return nil, fmt.Errorf("convert: output %s: unknown format %q: name it .csv, .parquet, .arrow, .npy or .npz", out, ext)
	}
}
