package formats

import (
	"bufio"
	"context"
	"os"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/arrowio"
	"github.com/geoknn/geoknn/pointio/csvio"
	"github.com/geoknn/geoknn/pointio/numpyio"
	"github.com/geoknn/geoknn/stream"
	"github.com/paulmach/orb"
)

// ByContent reports whether path is read by what it holds rather than by
// its name: "-" (standard input), or a special file whose name says no
// format (<(cat x.parquet), /dev/stdin, a FIFO without an extension),
// which can be read only once.
func ByContent(path string) bool {
	return path == "-" || (readByContent(path) && !arrowio.Handles(path))
}

// ReadPoints reads the points of path in degrees, as read, and the
// values of the column opts.IDColumn names: Parquet and Arrow files
// through package arrowio, the others as ReadFile describes, and inputs
// read by content (ByContent) as their first bytes say.
func ReadPoints(ctx context.Context, path string, opts pointio.ReadOptions) ([]orb.Point, []string, error) {
	return readPoints(ctx, path, opts, csvio.Sink{})
}

// readPoints is ReadPoints with a CSV input's points handed to sink.
func readPoints(ctx context.Context, path string, opts pointio.ReadOptions, sink csvio.Sink) ([]orb.Point, []string, error) {
	switch {
	case ByContent(path):
		return readPipe(ctx, path, opts, sink)
	case arrowio.Handles(path):
		return arrowio.ReadFileIDs(ctx, path, opts)
	}
	var ids []string
	pts, err := readFile(ctx, path, opts, sink, &ids)
	return endRead(ctx, pts, ids, err)
}

// ReadRadians reads path as ReadPoints does, straight into radian
// columns, so that a large file is never held as points and as columns
// at once.
func ReadRadians(ctx context.Context, path string, opts pointio.ReadOptions) (lat, lon []float64, ids []string, err error) {
	if arrowio.Handles(path) && !ByContent(path) {
		return arrowio.ReadFileRadians(ctx, path, opts)
	}
	fi, statErr := os.Stat(path)
	regular := statErr == nil && fi.Mode().IsRegular()
	if formatOf(path) == pointio.FormatNPY && opts.IDColumn == "" && regular {
		lat, lon, ok, err := numpyio.ReadNPYRadians(ctx, path, opts.Radians)
		if ok || err != nil {
			return lat, lon, nil, err
		}
	}
	// Room for rows of 21 bytes ("-12.345678,123.456789\n"): the pages a
	// wider file leaves untouched are never made resident.
	if regular {
		rows := min(fi.Size()/21+16, 1<<31)
		lat, lon = make([]float64, 0, rows), make([]float64, 0, rows)
	}
	sink := csvio.Sink{Points: func(pts []orb.Point) { lat, lon = pointio.AppendRadiansParallel(lat, lon, pts) }}
	pts, ids, err := readPoints(ctx, path, opts, sink)
	if err != nil {
		return nil, nil, nil, err
	}
	sink.Points(pts) // the formats read whole
	return lat, lon, ids, nil
}

// OpenChunks opens path for reading in chunks of about rows points (0:
// pointio.DefaultChunkRows): Parquet and Arrow files as arrowio.OpenChunks
// opens them, the others as openFileChunks does, and inputs read by
// content (ByContent) as openPipeChunks reads them. Errors name the
// input, never a copy.
func OpenChunks(ctx context.Context, path string, opts pointio.ReadOptions, rows int) (stream.ChunkReader, error) {
	switch {
	case ByContent(path):
		return openPipeChunks(ctx, path, opts, rows)
	case arrowio.Handles(path):
		return arrowio.OpenChunks(ctx, path, opts, rows)
	}
	return openFileChunks(ctx, path, opts, rows)
}

// OpenChunksRange is OpenChunks for rows [lo, hi) of path, an MPI rank's
// share of a file every rank reads: a Parquet file's row groups that hold
// them (arrowio.OpenChunksRange), a .npy file's rows from lo on, other
// formats read from the start and cut (pointio.ChunkRange). Errors name
// rows in the whole file.
func OpenChunksRange(ctx context.Context, path string, opts pointio.ReadOptions, rows int, lo, hi int64) (stream.ChunkReader, error) {
	switch {
	case arrowio.Handles(path):
		return arrowio.OpenChunksRange(ctx, path, opts, rows, lo, hi)
	case formatOf(path) == pointio.FormatNPY && opts.IDColumn == "":
		if _, byRows, err := numpyio.NPYRows(path); err == nil && byRows {
			return numpyio.OpenNPYChunksRange(path, opts.Radians, rows, int(lo), int(hi))
		}
	}
	r, err := OpenChunks(ctx, path, opts, rows)
	if err != nil {
		return nil, err
	}
	return pointio.ChunkRange(r, lo, hi), nil
}

// openPipeChunks opens standard input or the special file at path, which
// can be read only once: CSV (gzip-compressed or not), GeoJSON and .npy
// as a stream; Parquet, Arrow IPC and .npz, read from their end, through
// a temporary file removed on Close. The pipe is read under a context of
// its own, which Close cancels, so a stream closed early stops reading.
func openPipeChunks(ctx context.Context, path string, opts pointio.ReadOptions, rows int) (stream.ChunkReader, error) {
	pctx, cancel := context.WithCancel(ctx)
	br, ext, closePipe, err := openPipe(pctx, path)
	if err != nil {
		cancel()
		return nil, err
	}
	done := func() { cancel(); closePipe() }
	r, err := openPeekedChunks(ctx, br, ext, path, opts, rows)
	if err != nil || ext != "" {
		done() // a copy holds what the pipe held
		return r, err
	}
	return pipeChunks{r, done}, nil
}

// openPeekedChunks reads br, whose first bytes say ext (spooledExt), as
// a stream or through a copy; errors name path, the input.
func openPeekedChunks(ctx context.Context, br *bufio.Reader, ext, path string, opts pointio.ReadOptions, rows int) (stream.ChunkReader, error) {
	if ext == "" {
		if head, _ := br.Peek(len(numpyio.NPYMagic)); string(head) == numpyio.NPYMagic && opts.IDColumn == "" {
			return numpyio.OpenNPYChunks(br, describe(path), opts.Radians, rows)
		}
		return openBufferedChunks(br, describe(path), opts, rows), nil
	}
	tmp, err := pointio.SpoolStdin(ctx, br, "", ext)
	if err != nil {
		return nil, err
	}
	return pointio.OpenSpooledChunks(ctx, tmp, describe(path), func(tmp string) (stream.ChunkReader, error) {
		return OpenChunks(ctx, tmp, opts, rows)
	})
}

// describe names an input as errors do.
func describe(path string) string {
	if path == "-" {
		return "standard input"
	}
	return path
}
