package formats

import (
	"context"
	"os"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/arrowio"
	"github.com/geoknn/geoknn/stream"
	"github.com/paulmach/orb"
)

// ByContent reports whether path is read by what it holds rather than by
// its name: "-" (standard input), or a special file whose name says no
// format (<(cat x.parquet), /dev/stdin, a FIFO without an extension),
// which can be read only once.
func ByContent(path string) bool {
	return path == "-" || (pointio.ReadByContent(path) && !arrowio.Handles(path))
}

// ReadPoints reads the points of path in degrees, as read, and the
// values of the column opts.IDColumn names: Parquet and Arrow files
// through package arrowio, the others through pointio, and inputs read by
// content (ByContent) as their first bytes say.
func ReadPoints(ctx context.Context, path string, opts pointio.ReadOptions) ([]orb.Point, []string, error) {
	switch {
	case ByContent(path):
		return readPipe(ctx, path, opts)
	case arrowio.Handles(path):
		return arrowio.ReadFileIDs(ctx, path, opts)
	}
	return pointio.ReadFileIDs(ctx, path, opts)
}

// ReadRadians reads the file at path (not one read by content) straight
// into radian columns, so that a large file is never held as points and
// as columns at once.
func ReadRadians(ctx context.Context, path string, opts pointio.ReadOptions) (lat, lon []float64, ids []string, err error) {
	if arrowio.Handles(path) {
		return arrowio.ReadFileRadians(ctx, path, opts)
	}
	return pointio.ReadFileRadians(ctx, path, opts)
}

// OpenChunks opens path for reading in chunks of about rows points: files
// as arrowio.OpenChunks opens them, inputs read by content as a stream
// (text, .npy) or, for the formats read from their end (Parquet, Arrow,
// .npz), through a temporary copy removed on Close. Errors name the
// input, never the copy.
func OpenChunks(ctx context.Context, path string, opts pointio.ReadOptions, rows int) (stream.ChunkReader, error) {
	if !ByContent(path) {
		return arrowio.OpenChunks(ctx, path, opts, rows)
	}
	br, ext, done, err := openPipe(ctx, path)
	if err != nil {
		return nil, err
	}
	if ext == "" {
		r, err := arrowio.OpenReaderChunks(ctx, br, opts, rows, "")
		if err != nil {
			done()
			return nil, err
		}
		return pipeChunks{r, done}, nil
	}
	tmp, err := pointio.SpoolStdin(ctx, br, "", ext)
	done()
	if err != nil {
		return nil, err
	}
	r, err := arrowio.OpenChunks(ctx, tmp, opts, rows)
	if err != nil {
		os.Remove(tmp)
		return nil, stdinError{err, tmp, describe(path)}
	}
	return spooledChunks{r, tmp, describe(path)}, nil
}

// describe names an input as errors do.
func describe(path string) string {
	if path == "-" {
		return "standard input"
	}
	return path
}
