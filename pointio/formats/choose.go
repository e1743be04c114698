package pointio

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/geoknn/geoknn/internal/parallel"
	"github.com/paulmach/orb"
)

type format int

const (
	formatUnknown format = iota
	formatCSV
	formatGeoJSON
	formatParquet
	formatNPY
	formatNPZ
)

// formatOf picks the format from the file name extension, ignoring case.
func formatOf(path string) format {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv", ".txt":
		return formatCSV
	case ".geojson", ".json":
		return formatGeoJSON
	case ".parquet", ".geoparquet", ".parq":
		return formatParquet
	case ".npy":
		return formatNPY
	case ".npz":
		return formatNPZ
	}
	return formatUnknown
}

// parquetMagic starts (and ends) every Parquet file.
const parquetMagic = "PAR1"

// StartsWith reports whether the file at path starts with magic (false
// when it cannot be read): how inputs without an extension are sniffed.
func StartsWith(path, magic string) bool {
	if !sniffable(path) {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, len(magic))
	_, err = io.ReadFull(f, head)
	return err == nil && string(head) == magic
}

// IsParquet reports whether path names a Parquet file: by its extension
// (.parquet, .geoparquet, .parq) or, without one, by its first bytes.
func IsParquet(path string) bool {
	if path == "-" {
		return false
	}
	switch formatOf(path) {
	case formatParquet:
		return true
	case formatUnknown:
		return StartsWith(path, parquetMagic)
	}
	return false
}

// ReadFile reads the points stored in the file at path, as
// [longitude, latitude] pairs in degrees in file order.
//
// The format follows the extension, ignoring case: ".csv" and ".txt" are
// read with ReadCSV, ".geojson" and ".json" with ReadGeoJSON. For any other
// extension the content decides: if its first byte other than white space
// (after an optional UTF-8 byte order mark) is '{' the file is GeoJSON,
// otherwise CSV.
//
// Problems with the content are reported as *InputError values naming path;
// a file that cannot be opened or read gives an error wrapping the
// *fs.PathError.
func ReadFile(path string) ([]orb.Point, error) {
	return ReadFileContext(context.Background(), path)
}

// ReadFileContext is ReadFile that stops within one buffer of reading once
// ctx is done, returning ctx's error.
func ReadFileContext(ctx context.Context, path string) ([]orb.Point, error) {
	return ReadFileWith(ctx, path, ReadOptions{})
}

// ReadFileWith is ReadFileContext with options: the names of the
// coordinate columns.
func ReadFileWith(ctx context.Context, path string, opts ReadOptions) ([]orb.Point, error) {
	opts.IDColumn = ""
	pts, _, err := ReadFileIDs(ctx, path, opts)
	return pts, err
}

// ReadFileIDs is ReadFileWith that also returns, when opts.IDColumn names
// one, the values of that column, one a point (CSV; Parquet and Arrow
// through arrowio); other formats carry no id column and are refused.
func ReadFileIDs(ctx context.Context, path string, opts ReadOptions) ([]orb.Point, []string, error) {
	var ids []string
	pts, err := readFile(ctx, path, opts, &ids)
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, nil, ctxErr
	}
	if err != nil {
		return nil, nil, err
	}
	return pts, ids, nil
}

// readFile reads path's points, and into ids the id column opts names.
func readFile(ctx context.Context, path string, opts ReadOptions, ids *[]string) ([]orb.Point, error) {
	in, size, err := openInput(ctx, path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	return readFrom(ctx, in, path, size, opts, ids)
}

// ReadFileRadians is ReadFileIDs that returns the points as latitude and
// longitude columns in radians, what the engine reads: a CSV input goes
// into them a chunk at a time, so the points are never held twice.
func ReadFileRadians(ctx context.Context, path string, opts ReadOptions) (lat, lon []float64, ids []string, err error) {
	if formatOf(path) == formatNPY && opts.IDColumn == "" {
		if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
			lat, lon, ok, err := readNPYRadians(ctx, path, opts.Radians)
			if ok || err != nil {
				return lat, lon, nil, err
			}
		}
	}
	// Room for rows of 21 bytes ("-12.345678,123.456789\n"): the pages a
	// wider file leaves untouched are never made resident.
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		rows := min(fi.Size()/21+16, 1<<31)
		lat, lon = make([]float64, 0, rows), make([]float64, 0, rows)
	}
	opts.sink = func(pts []orb.Point) { lat, lon = AppendRadiansParallel(lat, lon, pts) }
	pts, ids, err := ReadFileIDs(ctx, path, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	opts.sink(pts) // the formats read whole
	return lat, lon, ids, nil
}

// AppendRadiansParallel is AppendRadians on every core, for large pts.
func AppendRadiansParallel(lat, lon []float64, pts []orb.Point) ([]float64, []float64) {
	n := len(lat)
	lat, lon = slices.Grow(lat, len(pts))[:n+len(pts)], slices.Grow(lon, len(pts))[:n+len(pts)]
	parallel.Blocks(len(pts), 1<<13, 0, func(_, lo, hi int) {
		AppendRadians(lat[n+lo:n+lo], lon[n+lo:n+lo], pts[lo:hi])
	})
	return lat, lon
}

// AppendRadians appends the latitudes and longitudes of pts, in radians,
// to lat and lon: the same operations as geoknn.Degrees, so the same bits.
func AppendRadians(lat, lon []float64, pts []orb.Point) ([]float64, []float64) {
	for _, p := range pts {
		lat, lon = append(lat, p[1]*math.Pi/180), append(lon, p[0]*math.Pi/180)
	}
	return lat, lon
}

// ReadReaderIDs is ReadFileIDs for a stream (standard input, say) named
// name in errors: CSV, GeoJSON or .npy, sniffed, gzip-compressed or not.
func ReadReaderIDs(ctx context.Context, r io.Reader, name string, opts ReadOptions) ([]orb.Point, []string, error) {
	var ids []string
	pts, err := readFrom(ctx, r, name, 0, opts, &ids)
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, nil, ctxErr
	}
	if err != nil {
		return nil, nil, err
	}
	return pts, ids, nil
}

// readFrom reads the points of in, the input path (its extension says the
// format, else its content) of size bytes (0: unknown).
func readFrom(ctx context.Context, in io.Reader, path string, size int64, opts ReadOptions, ids *[]string) ([]orb.Point, error) {
	var err error
	br := bufio.NewReaderSize(ctxReader{ctx, in}, csvMaxRecordBytes+readBufferSize)
	kind := formatOf(path)
	if head, _ := br.Peek(4); kind == formatParquet || (kind == formatUnknown && string(head) == parquetMagic) {
		return nil, fileError(path, "a Parquet file: read it with package pointio/arrowio (knn run does)")
	}
	switch head, _ := br.Peek(6); {
	case opts.IDColumn != "" && (kind == formatNPY || kind == formatNPZ || string(head) == "\x93NUMPY"):
		return nil, fileError(path, "NumPy arrays carry no id column (--obs-id, --ref-id: CSV, Parquet or Arrow)")
	case kind == formatNPY || (kind == formatUnknown && string(head) == "\x93NUMPY"):
		return readNPY(br, path, size, opts.Radians)
	case kind == formatNPZ:
		return readNPZFile(path, opts)
	}
	if head, _ := br.Peek(2); string(head) == "\x1f\x8b" {
		// gzip: the name without .gz says the format.
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, corruptGzip(path, err)
		}
		br, size = bufio.NewReaderSize(ctxReader{ctx, gzipReader{gz, path}}, csvMaxRecordBytes+readBufferSize), 0
		kind = formatOf(strings.TrimSuffix(strings.TrimSuffix(path, ".gz"), ".GZ"))
	}
	if err := checkContent(br, path, kind); err != nil {
		return nil, err
	}
	if kind == formatUnknown {
		if kind, err = sniff(br); err != nil {
			return nil, readError(path, err)
		}
	}
	if kind == formatGeoJSON {
		var buf bytes.Buffer
		if size > 0 && size < 1<<31 {
			buf.Grow(int(size) + bytes.MinRead)
		}
		if _, err := buf.ReadFrom(br); err != nil {
			return nil, readError(path, err)
		}
		pts, got, err := decodeGeoJSON(buf.Bytes(), path, opts.IDColumn)
		*ids = got
		return pts, err
	}
	pts, got, err := readCSV(br, path, size, opts)
	*ids = got
	return pts, err
}

// gzipReader reports corrupt compressed data as an InputError.
type gzipReader struct {
	r    io.Reader
	path string
}

func (g gzipReader) Read(b []byte) (int, error) {
	n, err := g.r.Read(b)
	if err != nil && err != io.EOF {
		var pe *fs.PathError
		if !errors.As(err, &pe) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			err = corruptGzip(g.path, err)
		}
	}
	return n, err
}

func corruptGzip(path string, err error) error {
	return &InputError{File: path, Feature: -1, Point: -1, Reason: "gzip-compressed data is corrupt or truncated", Err: err}
}

// readNPZFile reads a NumPy archive, which zip reads from its end.
func readNPZFile(path string, opts ReadOptions) ([]orb.Point, error) {
	if path == "-" {
		return nil, fileError("standard input", "a .npz archive from standard input: give the file's name")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read points: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read points: %w", err)
	}
	return readNPZ(f, fi.Size(), path, opts)
}

// openInput opens path ("-": standard input) and returns its size when
// known (0 otherwise). Standard input and other files that are not regular
// (a FIFO) are read through CancelReader, so that ctx stops a read that
// waits on them.
func openInput(ctx context.Context, path string) (io.ReadCloser, int64, error) {
	if path == "-" {
		return io.NopCloser(CancelReader(ctx, os.Stdin)), 0, nil
	}
	f, err := openStoppable(ctx, path, os.O_RDONLY)
	if err != nil {
		return nil, 0, fmt.Errorf("read points: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		return f, 0, nil
	}
	if fi.IsDir() {
		f.Close()
		return nil, 0, fmt.Errorf("read points: %s is a directory", path)
	}
	if !fi.Mode().IsRegular() {
		return readCloser{CancelReader(ctx, f), f}, 0, nil
	}
	return f, fi.Size(), nil
}

// readCloser reads from one reader and closes another.
type readCloser struct {
	io.Reader
	io.Closer
}

// sniff guesses the format from the first byte that is not white space or
// part of a byte order mark, without consuming input.
func sniff(br *bufio.Reader) (format, error) {
	for n := 64; ; n *= 2 {
		n = min(n, br.Size())
		b, err := br.Peek(n)
		b = bytes.TrimPrefix(b, utf8BOM)
		if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 {
			if t[0] == '{' {
				return formatGeoJSON, nil
			}
			return formatCSV, nil
		}
		if err == io.EOF || n == br.Size() {
			// Empty, or white space as far as we can see: let the CSV
			// reader report it.
			return formatCSV, nil
		}
		if err != nil {
			return formatUnknown, err
		}
	}
}

// SpoolStdin copies standard input, read through r, to a new temporary
// file named *ext in dir ("": os.TempDir()) and returns its path, for
// formats read from their end; the file is removed if the copy fails.
func SpoolStdin(ctx context.Context, r io.Reader, dir, ext string) (string, error) {
	f, err := os.CreateTemp(dir, "knn-stdin-*"+ext)
	if err != nil {
		return "", fmt.Errorf("standard input: %w", err)
	}
	_, err = io.Copy(f, ContextReader(ctx, r))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("standard input: %w", err)
	}
	return f.Name(), nil
}

// ContextReader returns a reader of r that fails every read once ctx is
// done, so that copying a long input stops within one buffer.
func ContextReader(ctx context.Context, r io.Reader) io.Reader { return ctxReader{ctx, r} }

// ctxReader fails every read once its context is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(b)
}

// checkContent names content that is not the text this package reads,
// rather than letting the CSV or JSON parser report its bytes: compressed
// files and archives, UTF-16, binary data, and GeoJSON in a CSV file.
func checkContent(br *bufio.Reader, path string, kind format) error {
	head, _ := br.Peek(512)
	for _, c := range []struct {
		prefix, what string
	}{
		{"\x1f\x8b", "gzip-compressed data inside gzip: decompress it first (gunzip)"},
		{"PK\x03\x04", "a zip archive: geoknn reads CSV, GeoJSON and Parquet files, and gzip-compressed text"},
		{parquetMagic, "a Parquet file: name it .parquet"},
		{"\xff\xfe", "UTF-16 text: convert it to UTF-8 (iconv -f UTF-16 -t UTF-8)"},
		{"\xfe\xff", "UTF-16 text: convert it to UTF-8 (iconv -f UTF-16 -t UTF-8)"},
	} {
		if bytes.HasPrefix(head, []byte(c.prefix)) {
			return fileError(path, c.what)
		}
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return fileError(path, "binary data, not CSV or GeoJSON text")
	}
	text := bytes.TrimLeft(bytes.TrimPrefix(head, utf8BOM), " \t\r\n")
	if kind == formatCSV && len(text) > 0 && text[0] == '{' {
		return fileError(path, "this looks like GeoJSON (it starts with '{'): name the file .geojson")
	}
	return nil
}
