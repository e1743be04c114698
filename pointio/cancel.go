package pointio

import (
	"context"
	"io"
)

// CancelReader returns a reader of r whose Read returns ctx's error as
// soon as ctx is done, even while r's own Read blocks (a pipe, FIFO or
// terminal that has gone quiet), so that a signal stops a command reading
// one. r is read by a goroutine of its own through an io.Pipe; it ends
// when r does or at its first read after ctx is done, and one blocked in
// r's Read lives until that returns or the process ends. A goroutine and
// a pipe were measured simplest: setting the descriptor non-blocking (for
// read deadlines) would change it for every process sharing it, a
// terminal included.
func CancelReader(ctx context.Context, r io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		_, err := io.Copy(pw, ContextReader(ctx, r))
		pw.CloseWithError(err)
	}()
	context.AfterFunc(ctx, func() { pr.Close() })
	return cancelReader{ctx, pr}
}

// cancelReader reads the pipe, and gives ctx's error once ctx is done.
type cancelReader struct {
	ctx context.Context
	pr  *io.PipeReader
}

func (c cancelReader) Read(b []byte) (int, error) {
	n, err := c.pr.Read(b)
	if err != nil && c.ctx.Err() != nil {
		return n, c.ctx.Err()
	}
	return n, err
}
