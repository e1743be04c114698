package pointio

import (
	"context"
	"fmt"
	"io"
	"os"
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
