package formats

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/arrowio"
	"github.com/geoknn/geoknn/pointio/csvio"
	"github.com/geoknn/geoknn/pointio/geojsonio"
	"github.com/geoknn/geoknn/pointio/internal/check"
	"github.com/geoknn/geoknn/pointio/numpyio"
	"github.com/paulmach/orb"
)

// formatOf is the name of the format path's extension says, "" for
// none (pointio.FormatByExt).
func formatOf(path string) string { return pointio.FormatByExt(path) }

// ReadFile reads the points stored in the file at path, as
// [longitude, latitude] pairs in degrees in file order.
//
// The format follows the extension, ignoring case: ".csv" and ".txt" are
// read with csvio, ".geojson" and ".json" with geojsonio, ".npy" and
// ".npz" with numpyio. For any other extension the content decides: a
// .npy array by its magic, gzip by its (then the name without .gz
// decides), GeoJSON if its first byte other than white space (after an
// optional UTF-8 byte order mark) is '{', otherwise CSV. Parquet and
// Arrow files are read with arrowio, by extension (.parquet, .arrow, ...)
// or, with none, by their magic; standard input and pipes as ReadPoints
// reads them.
//
// Problems with the content are reported as *pointio.InputError values
// naming path;
// a file that cannot be opened or read gives an error wrapping the
// *fs.PathError.
func ReadFile(path string) ([]orb.Point, error) {
	return ReadFileContext(context.Background(), path)
}

// ReadFileContext is ReadFile that stops within one buffer of reading once
// ctx is done, returning ctx's error.
func ReadFileContext(ctx context.Context, path string) ([]orb.Point, error) {
	return ReadFileWith(ctx, path, pointio.ReadOptions{})
}

// ReadFileWith is ReadFileContext with options: the names of the
// coordinate columns.
func ReadFileWith(ctx context.Context, path string, opts pointio.ReadOptions) ([]orb.Point, error) {
	opts.IDColumn = ""
	pts, _, err := ReadFileIDs(ctx, path, opts)
	return pts, err
}

// ReadFileIDs is ReadFileWith that also returns, when opts.IDColumn names
// one, the values of that column, one a point (CSV, GeoJSON, Parquet and
// Arrow); NumPy arrays carry no id column and are refused. It is
// ReadPoints, under the name of the ReadFile family.
func ReadFileIDs(ctx context.Context, path string, opts pointio.ReadOptions) ([]orb.Point, []string, error) {
	return ReadPoints(ctx, path, opts)
}

// readFile reads path's points, and into ids the id column opts names.
func readFile(ctx context.Context, path string, opts pointio.ReadOptions, sink csvio.Sink, ids *[]string) ([]orb.Point, error) {
	in, size, err := openInput(ctx, path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	return readFrom(ctx, in, path, size, opts, sink, ids)
}

// endRead is what a whole read returns: ctx's error once it is done (the
// read may have stopped anywhere), else the points or the error.
func endRead(ctx context.Context, pts []orb.Point, ids []string, err error) ([]orb.Point, []string, error) {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, nil, ctxErr
	}
	if err != nil {
		return nil, nil, err
	}
	return pts, ids, nil
}

// ReadFileRadians is ReadFileIDs that returns the points as latitude and
// longitude columns in radians, what the engine reads: a CSV input goes
// into them a chunk at a time, so the points are never held twice. It is
// ReadRadians, under the name of the ReadFile family.
func ReadFileRadians(ctx context.Context, path string, opts pointio.ReadOptions) (lat, lon []float64, ids []string, err error) {
	return ReadRadians(ctx, path, opts)
}

// ReadReaderIDs is ReadFileIDs for a stream (standard input, say) named
// name in errors: CSV, GeoJSON or .npy, sniffed, gzip-compressed or not.
func ReadReaderIDs(ctx context.Context, r io.Reader, name string, opts pointio.ReadOptions) ([]orb.Point, []string, error) {
	var ids []string
	pts, err := readFrom(ctx, r, name, 0, opts, csvio.Sink{}, &ids)
	return endRead(ctx, pts, ids, err)
}

// readFrom reads the points of in, the input path (its extension says the
// format, else its content) of size bytes (0: unknown), a CSV input's
// handed to sink when sink.Points is set, and into ids the id column
// opts names.
func readFrom(ctx context.Context, in io.Reader, path string, size int64, opts pointio.ReadOptions, sink csvio.Sink, ids *[]string) ([]orb.Point, error) {
	br := bufio.NewReaderSize(pointio.ContextReader(ctx, in), csvio.ReaderBufferSize)
	return readBuffered(ctx, br, path, size, opts, sink, ids)
}

// readBuffered is readFrom of br, a buffer of csvio.ReaderBufferSize
// whose reads already fail once ctx is done (a pipe read through
// pointio.CancelReader): the bytes in its buffer, peeked to choose the
// format, are parsed from there, not copied into a second buffer.
func readBuffered(ctx context.Context, br *bufio.Reader, path string, size int64, opts pointio.ReadOptions, sink csvio.Sink, ids *[]string) ([]orb.Point, error) {
	kind := formatOf(path)
	if pts, binary, err := readBinary(br, path, size, kind, opts); binary {
		return pts, err
	}
	if head, _ := br.Peek(2); string(head) == gzipMagic {
		// gzip: the name without .gz says the format.
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, corruptGzip(path, err)
		}
		br, size = bufio.NewReaderSize(pointio.ContextReader(ctx, gzipReader{gz, path}), csvio.ReaderBufferSize), 0
		kind = formatOf(strings.TrimSuffix(strings.TrimSuffix(path, ".gz"), ".GZ"))
	}
	return readText(br, path, size, kind, opts, sink, ids)
}

// readBinary reads a NumPy input, and refuses a Parquet one (package
// arrowio reads it) and NumPy arrays asked for ids; binary reports
// whether br held one of them.
func readBinary(br *bufio.Reader, path string, size int64, kind string, opts pointio.ReadOptions) (_ []orb.Point, binary bool, _ error) {
	if head, _ := br.Peek(4); kind == pointio.FormatParquet || (kind == "" && string(head) == arrowio.ParquetMagic) {
		return nil, true, check.FileError(path, "a Parquet file: read it with package pointio/arrowio (knn run does)")
	}
	head, _ := br.Peek(6)
	switch npy := string(head) == numpyio.NPYMagic; {
	case opts.IDColumn != "" && (kind == pointio.FormatNPY || kind == pointio.FormatNPZ || npy):
		return nil, true, check.FileError(path, "NumPy arrays carry no id column (--obs-id, --ref-id: CSV, Parquet or Arrow)")
	case kind == pointio.FormatNPY || (kind == "" && npy):
		pts, err := numpyio.ReadNPY(br, path, size, opts.Radians)
		return pts, true, err
	case kind == pointio.FormatNPZ:
		pts, err := numpyio.ReadNPZFile(path, opts)
		return pts, true, err
	}
	return nil, false, nil
}

// readText reads CSV or GeoJSON text, as its kind or, unknown, its
// content says.
func readText(br *bufio.Reader, path string, size int64, kind string, opts pointio.ReadOptions, sink csvio.Sink, ids *[]string) ([]orb.Point, error) {
	if err := checkContent(br, path, kind); err != nil {
		return nil, err
	}
	if kind == "" {
		var err error
		if kind, err = sniff(br); err != nil {
			return nil, check.ReadError(path, err)
		}
	}
	if kind == pointio.FormatGeoJSON {
		var buf bytes.Buffer
		if size > 0 && size < 1<<31 {
			buf.Grow(int(size) + bytes.MinRead)
		}
		if _, err := buf.ReadFrom(br); err != nil {
			return nil, check.ReadError(path, err)
		}
		pts, got, err := geojsonio.Decode(buf.Bytes(), path, opts.IDColumn)
		*ids = got
		return pts, err
	}
	pts, got, err := csvio.ReadBuffered(br, path, size, opts, sink)
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
	return &pointio.InputError{File: path, Feature: -1, Point: -1, Reason: "gzip-compressed data is corrupt or truncated", Err: err}
}

// openInput opens path (not standard input, which ReadPoints and
// OpenChunks read by content) and returns its size when known (0
// otherwise). A file that is not regular (a FIFO named .csv) is read
// through CancelReader, so that ctx stops a read that waits on it.
func openInput(ctx context.Context, path string) (io.ReadCloser, int64, error) {
	f, err := pointio.OpenStoppable(ctx, path)
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
		return readCloser{pointio.CancelReader(ctx, f), f}, 0, nil
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
func sniff(br *bufio.Reader) (string, error) {
	for n := 64; ; n *= 2 {
		n = min(n, br.Size())
		b, err := br.Peek(n)
		b = bytes.TrimPrefix(b, check.BOM)
		if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 {
			if t[0] == '{' {
				return pointio.FormatGeoJSON, nil
			}
			return pointio.FormatCSV, nil
		}
		if err == io.EOF || n == br.Size() {
			// Empty, or white space as far as we can see: let the CSV
			// reader report it.
			return pointio.FormatCSV, nil
		}
		if err != nil {
			return "", err
		}
	}
}

// checkContent names content that is not the text csvio and geojsonio read,
// rather than letting the CSV or JSON parser report its bytes: compressed
// files and archives, UTF-16, binary data, and GeoJSON in a CSV file.
func checkContent(br *bufio.Reader, path string, kind string) error {
	head, _ := br.Peek(512)
	for _, c := range []struct {
		prefix, what string
	}{
		{gzipMagic, "gzip-compressed data inside gzip: decompress it first (gunzip)"},
		{numpyio.NPZMagic, "a zip archive: geoknn reads CSV, GeoJSON and Parquet files, and gzip-compressed text"},
		{arrowio.ParquetMagic, "a Parquet file: name it .parquet"},
		{"\xff\xfe", "UTF-16 text: convert it to UTF-8 (iconv -f UTF-16 -t UTF-8)"},
		{"\xfe\xff", "UTF-16 text: convert it to UTF-8 (iconv -f UTF-16 -t UTF-8)"},
	} {
		if bytes.HasPrefix(head, []byte(c.prefix)) {
			return check.FileError(path, c.what)
		}
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return check.FileError(path, "binary data, not CSV or GeoJSON text")
	}
	text := bytes.TrimLeft(bytes.TrimPrefix(head, check.BOM), " \t\r\n")
	if kind == pointio.FormatCSV && len(text) > 0 && text[0] == '{' {
		return check.FileError(path, "this looks like GeoJSON (it starts with '{'): name the file .geojson")
	}
	return nil
}

// readByContent reports whether path is a special file
// (pointio.IsSpecial) whose name says none of the text and NumPy formats
// (`<(cat x.parquet)`, /dev/stdin, a FIFO named without an extension):
// what it holds is told by its first bytes, and it can be read only once.
func readByContent(path string) bool {
	return path != "-" && formatOf(path) == "" && pointio.IsSpecial(path)
}
