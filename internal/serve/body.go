package serve

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"
)

// limitBody bounds r's body by the body limit and its upload by the
// query timeout from start: a client that stops sending holds no
// buffer, slot or goroutine past it, and is answered 408. Reading the
// body's end clears the connection's read deadline: net/http then reads
// the connection in the background (at once for a request without a
// body, which gets none), and a deadline passing there would cancel the
// connection's later requests. A body left unread keeps it, so that
// net/http's discarding of the rest after the answer ends by it too.
func (s *Server) limitBody(w http.ResponseWriter, r *http.Request, start time.Time) io.ReadCloser {
	body := http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	if r.ContentLength == 0 || r.Body == http.NoBody {
		return body
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(start.Add(s.cfg.QueryTimeout)) != nil {
		return body // a connection without deadlines
	}
	return &deadlineBody{ReadCloser: body, rc: rc}
}

// deadlineBody is a body read under a read deadline.
type deadlineBody struct {
	io.ReadCloser
	rc      *http.ResponseController
	cleared bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF:
		b.clear()
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = &requestError{status: http.StatusRequestTimeout, field: "body",
			msg: "not received within the query timeout (--query-timeout)"}
	}
	return n, err
}

func (b *deadlineBody) clear() {
	if !b.cleared {
		b.cleared = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
}
