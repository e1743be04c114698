package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

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

Example:
  knn convert cities.csv cities.parquet
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
	pts, _, err := readDegrees(ctx, in, opts)
	if err != nil {
		return err
	}
	if err := pointio.Write(ctx, out, stdout, func(w *bufio.Writer) error { return write(w, pts) }); err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	fmt.Fprintf(stderr, "wrote %s (%d points)\n", describeOut(out), len(pts))
	return nil
}

// pointsWriter is the writer of points for out's extension.
func pointsWriter(out string) (func(w *bufio.Writer, pts []orb.Point) error, error) {
	switch ext := strings.ToLower(filepath.Ext(out)); ext {
	case ".csv", ".txt", "":
		return func(w *bufio.Writer, pts []orb.Point) error { return pointio.WritePointsCSV(w, pts) }, nil
	case ".npy":
		return func(w *bufio.Writer, pts []orb.Point) error { return pointio.WritePointsNPY(w, pts) }, nil
	case ".npz":
		return func(w *bufio.Writer, pts []orb.Point) error { return pointio.WritePointsNPZ(w, pts) }, nil
	case ".parquet", ".arrow", ".feather":
		format, _ := pointio.OutputFormat(out)
		return func(w *bufio.Writer, pts []orb.Point) error { return arrowio.WritePoints(w, format, pts) }, nil
	default:
		return nil, fmt.Errorf("convert: output %s: unknown format %q: name it .csv, .parquet, .arrow, .npy or .npz", out, ext)
	}
}
