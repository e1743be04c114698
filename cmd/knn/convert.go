package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/formats"
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
	format, err := formats.ForPoints(out)
	if err != nil {
		return usageError{fmt.Errorf("convert: %w", err)}
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
	pts, _, err := formats.ReadPoints(ctx, in, opts)
	if err != nil {
		return err
	}
	attrs := attributes{}
	if !format.Attributes {
		if len(names) > 0 {
			fmt.Fprintf(stderr, "knn convert: %s holds numbers only: left out the columns %s (kept in .csv, .parquet, .arrow)\n", out, strings.Join(names, ", "))
		}
	} else if attrs, err = readAttributes(ctx, in, opts, names, len(pts)); err != nil {
		return err
	}
	p := formats.Points{Pts: pts, Names: attrs.names, Values: attrs.values}
	if err := pointio.Write(ctx, out, stdout, func(w *bufio.Writer) error { return format.Points(w, p) }); err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	cols := "lat, lon"
	if len(attrs.names) > 0 {
		cols += ", " + strings.Join(attrs.names, ", ")
	}
	fmt.Fprintf(stderr, "wrote %s (%d points; columns %s)\n", describe(out, "standard output"), len(pts), cols)
	return nil
}
