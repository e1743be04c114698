package pointio

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/geoknn/geoknn/stream"
)

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

// SpooledError is err, an error reading tmp, the temporary copy of the
// input the user named name (standard input, a pipe), told as one about
// name: the user never named the copy. nil, io.EOF and ctx's error come
// back as they are.
func SpooledError(ctx context.Context, err error, tmp, name string) error {
	if err == nil || err == io.EOF || err == ctx.Err() {
		return err
	}
	return spooledError{err, tmp, name}
}

// spooledError is an error about a copy, told as one about its input.
type spooledError struct {
	err       error
	tmp, name string
}

func (e spooledError) Error() string { return strings.ReplaceAll(e.err.Error(), e.tmp, e.name) }

func (e spooledError) Unwrap() error { return e.err }

// OpenSpooledChunks opens tmp, the temporary copy of the input named
// name, with open: the reader's errors name the input, and its Close
// removes the copy (as does a failed open).
func OpenSpooledChunks(ctx context.Context, tmp, name string, open func(tmp string) (stream.ChunkReader, error)) (stream.ChunkReader, error) {
	r, err := open(tmp)
	if err != nil {
		os.Remove(tmp)
		return nil, SpooledError(ctx, err, tmp, name)
	}
	return spooledChunks{r, tmp, name}, nil
}

// spooledChunks reads a copy in chunks, naming its input in errors, and
// removes the copy on Close.
type spooledChunks struct {
	stream.ChunkReader
	tmp, name string
}

func (s spooledChunks) Next(ctx context.Context, dst stream.Chunk) (stream.Chunk, error) {
	c, err := s.ChunkReader.Next(ctx, dst)
	return c, SpooledError(ctx, err, s.tmp, s.name)
}

func (s spooledChunks) Close() error {
	err := s.ChunkReader.Close()
	os.Remove(s.tmp)
	return err
}
