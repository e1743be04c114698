package serve

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"
)

// limitBody bounds r's body by the body limit and its upload by the
// query timeout from start: a client that stops sending is answered 408
// by then, and a body left unread is discarded by net/http under the same
// deadline. net/http clears the deadline itself once the body has been
// read, before it watches the connection in the background; a request
// without a body gets none, since that watch starts at once and a
// deadline passing in it would cancel the connection's later requests.
func (s *Server) limitBody(w http.ResponseWriter, r *http.Request, start time.Time) io.ReadCloser {
	body := http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	if r.ContentLength == 0 || r.Body == http.NoBody {
		return body
	}
	if http.NewResponseController(w).SetReadDeadline(start.Add(s.cfg.QueryTimeout)) != nil {
		return body // a connection without deadlines
	}
	return deadlineBody{body}
}

// deadlineBody is a body read under a read deadline, whose passing is
// the client's fault.
type deadlineBody struct{ io.ReadCloser }

func (b deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		err = &requestError{status: http.StatusRequestTimeout, field: "body",
			msg: "not received within the query timeout (--query-timeout)"}
	}
	return n, err
}
