package arrowio

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/stream"
)

// spoolable reports whether path is a FIFO or device (a named pipe,
// /dev/stdin, <(...)) that this package would read: Parquet and Arrow
// are read at random or from their end, which a pipe cannot be, and
// opening one blocks until a writer comes. Such an input is opened once,
// stoppably, and copied to a temporary file first (spoolInput), as
// standard input is.
func spoolable(path string) bool {
	return path != "-" && pointio.IsSpecial(path) && Handles(path)
}

// spoolInput copies the special file at path to a temporary file of the
// same extension (so that it is read in the format its name says) and
// returns the copy's name, which the caller removes.
func spoolInput(ctx context.Context, path string) (string, error) {
	return pointio.SpoolSpecial(ctx, path, strings.ToLower(filepath.Ext(path)))
}

// readSpooled reads the special file at path through a temporary copy,
// removed before it returns, with read.
func readSpooled[T any](ctx context.Context, path string, read func(tmp string) (T, error)) (T, error) {
	var zero T
	tmp, err := spoolInput(ctx, path)
	if err != nil {
		return zero, err
	}
	defer os.Remove(tmp)
	v, err := read(tmp)
	return v, pointio.SpooledError(ctx, err, tmp, path)
}

// openSpooledChunks is OpenChunks of a special file's temporary copy,
// removed on Close.
func openSpooledChunks(ctx context.Context, path string, opts pointio.ReadOptions, chunkRows int) (stream.ChunkReader, error) {
	tmp, err := spoolInput(ctx, path)
	if err != nil {
		return nil, err
	}
	return pointio.OpenSpooledChunks(ctx, tmp, path, func(tmp string) (stream.ChunkReader, error) {
		return OpenChunks(ctx, tmp, opts, chunkRows)
	})
}

// notSpecial refuses a special file where the reader needs a regular one
// (its callers copy special files first): opening it would block, and
// reading it at random would fail.
func notSpecial(path string) error {
	if pointio.IsSpecial(path) {
		return inputError(path, "a pipe or device, not a regular file: Parquet and Arrow are read from a file", nil)
	}
	return nil
}
