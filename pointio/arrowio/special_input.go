package arrowio

import (
	"context"
	"io"
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

// spooledAs is an error about the copy tmp, told as one about path: the
// user never named the copy.
type spooledAs struct {
	err       error
	tmp, path string
}

func (e spooledAs) Error() string { return strings.ReplaceAll(e.err.Error(), e.tmp, e.path) }

func (e spooledAs) Unwrap() error { return e.err }

// spooledError is err (nil, io.EOF and ctx's error as they are) told as one
// about path rather than its copy tmp.
func spooledError(ctx context.Context, err error, tmp, path string) error {
	if err == nil || err == io.EOF || err == ctx.Err() {
		return err
	}
	return spooledAs{err, tmp, path}
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
	return v, spooledError(ctx, err, tmp, path)
}

// openSpooledChunks is OpenChunks of a special file's temporary copy,
// removed on Close.
func openSpooledChunks(ctx context.Context, path string, opts pointio.ReadOptions, chunkRows int) (stream.ChunkReader, error) {
	tmp, err := spoolInput(ctx, path)
	if err != nil {
		return nil, err
	}
	c, err := OpenChunks(ctx, tmp, opts, chunkRows)
	if err != nil {
		os.Remove(tmp)
		return nil, spooledError(ctx, err, tmp, path)
	}
	return spooledInput{spooled{c, tmp}, path}, nil
}

// spooledInput is a special file's copy read in chunks, its errors naming
// the file the user named.
type spooledInput struct {
	spooled
	name string
}

func (s spooledInput) Next(ctx context.Context, dst stream.Chunk) (stream.Chunk, error) {
	c, err := s.spooled.Next(ctx, dst)
	return c, spooledError(ctx, err, s.path, s.name)
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

// spooled is a chunk reader of a temporary file, removed on Close.
type spooled struct {
	stream.ChunkReader
	path string
}

func (s spooled) Close() error {
	err := s.ChunkReader.Close()
	os.Remove(s.path)
	return err
}
