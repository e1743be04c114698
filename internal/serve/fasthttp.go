package serve

import (
	"bufio"
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The fast path answers the common request, a small JSON query on a
// keep-alive HTTP/1.1 connection, without net/http: its per-request cost
// (a goroutine handoff to read the next request, a flush per response,
// header maps) was most of a one-point query's. A connection starts here;
// the first request the fast path does not take whole (any other endpoint
// or method, Arrow, chunked bodies, Expect, a body that is not the plain
// shape, a refusal to explain) hands the connection, its bytes unread, to
// net/http for the rest of its life. Answers to pipelined requests go out
// in one write, as Redis's do.

// idleTimeout is how long a fast-path connection may wait for its next
// request.
const idleTimeout = 2 * time.Minute

// maxFastHeader bounds a request head read by the fast path.
const maxFastHeader = 8192

// handoff is a net.Listener of the connections the fast path hands on.
type handoff struct {
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
	addr net.Addr
}

func newHandoff(addr net.Addr) *handoff {
	return &handoff{ch: make(chan net.Conn), done: make(chan struct{}), addr: addr}
}

func (h *handoff) Accept() (net.Conn, error) {
	select {
	case c := <-h.ch:
		return c, nil
	case <-h.done:
		return nil, net.ErrClosed
	}
}

func (h *handoff) Close() error {
	h.once.Do(func() { close(h.done) })
	return nil
}

func (h *handoff) Addr() net.Addr { return h.addr }

// give hands c on; false once the listener is closed.
func (h *handoff) give(c net.Conn) bool {
	select {
	case h.ch <- c:
		return true
	case <-h.done:
		return false
	}
}

// bufferedConn reads what the fast path buffered before the socket.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// fastConns tracks the connections on the fast path, for the drain. A
// connection's state is its own atomic flag, not an entry under the
// set's lock: every request marks it twice, from every core at once.
type fastConns struct {
	mu    sync.Mutex
	conns map[net.Conn]*atomic.Bool // true while a request is being answered
	wg    sync.WaitGroup
	drain atomic.Bool
}

// add tracks c; nil once the drain has begun.
func (f *fastConns) add(c net.Conn) *atomic.Bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.drain.Load() {
		return nil
	}
	if f.conns == nil {
		f.conns = map[net.Conn]*atomic.Bool{}
	}
	st := &atomic.Bool{}
	f.conns[c] = st
	f.wg.Add(1)
	return st
}

func (f *fastConns) remove(c net.Conn) {
	f.mu.Lock()
	delete(f.conns, c)
	f.mu.Unlock()
	f.wg.Done()
}

// busy marks a connection answering (or not); false when the server
// drains and it is idle: the connection is to be closed. The mark comes
// before the drain's check, and startDrain sets the drain before reading
// the marks, so that one of the two always sees the other.
func (f *fastConns) busy(st *atomic.Bool, b bool) bool {
	st.Store(b)
	return !f.drain.Load() || b
}

// startDrain wakes every connection waiting for a request: it closes.
func (f *fastConns) startDrain() {
	f.drain.Store(true)
	f.mu.Lock()
	defer f.mu.Unlock()
	for c, answering := range f.conns {
		if !answering.Load() {
			_ = c.SetReadDeadline(time.Now())
		}
	}
}

func (f *fastConns) draining() bool { return f.drain.Load() }

// answering counts the connections answering a request.
func (f *fastConns) answering() int64 {
	if f == nil {
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	n := int64(0)
	for _, busy := range f.conns {
		if busy.Load() {
			n++
		}
	}
	return n
}

// fastRequest is a request head the fast path takes.
type fastRequest struct {
	at        endpoint
	bodyLen   int
	closeConn bool
}

var (
	crlfcrlf  = []byte("\r\n\r\n")
	fastPaths = map[string]endpoint{"/v1/nearest": atNearest, "/v1/knearest": atKNearest, "/v1/within": atWithin}
)

// parseHead reads a buffered request head; ok false when the fast path
// does not take the request.
func (s *Server) parseHead(head []byte) (fastRequest, bool) {
	var fr fastRequest
	line, rest, _ := bytes.Cut(head, []byte("\r\n"))
	method, after, ok1 := bytes.Cut(line, []byte(" "))
	path, proto, ok2 := bytes.Cut(after, []byte(" "))
	if !ok1 || !ok2 || string(method) != "POST" || string(proto) != "HTTP/1.1" {
		return fr, false
	}
	k, ok := fastPaths[string(path)]
	if !ok {
		return fr, false
	}
	fr.at, fr.bodyLen = k, -1
	authorized := s.cfg.Token == ""
	for len(rest) > 0 {
		var h []byte
		h, rest, _ = bytes.Cut(rest, []byte("\r\n"))
		if len(h) == 0 {
			break
		}
		name, value, ok := bytes.Cut(h, []byte(":"))
		if !ok {
			return fr, false
		}
		value = bytes.TrimSpace(value)
		if !fr.header(name, value, s.cfg.Token, &authorized) {
			return fr, false
		}
	}
	return fr, fr.bodyLen >= 0 && authorized
}

// header takes one header line into fr; false when the fast path does not
// take the request. Names and values are compared without case and
// without lowering them into fresh memory.
func (fr *fastRequest) header(name, value []byte, token string, authorized *bool) bool {
	is := func(s string) bool { return len(name) == len(s) && bytes.EqualFold(name, []byte(s)) }
	switch {
	case is("content-length"):
		n, err := strconv.Atoi(string(value))
		if err != nil || n < 0 || n > smallBody || fr.bodyLen >= 0 {
			return false
		}
		fr.bodyLen = n
	case is("content-type"):
		return hasPrefixFold(value, "application/json") || hasPrefixFold(value, "application/x-www-form-urlencoded")
	case is("accept"):
		return !isArrow(string(value))
	case is("transfer-encoding"), is("expect"), is("upgrade"):
		return false
	case is("connection"):
		fr.closeConn = bytes.EqualFold(value, []byte("close"))
	case is("authorization"):
		tok, ok := bytes.CutPrefix(value, []byte("Bearer "))
		*authorized = ok && subtle.ConstantTimeCompare(tok, []byte(token)) == 1
	}
	return true
}

func hasPrefixFold(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && bytes.EqualFold(b[:len(prefix)], []byte(prefix))
}

// serveFast answers c's requests until one is not the fast path's (then
// c goes to net/http) or c ends.
func (s *Server) serveFast(c net.Conn, h *handoff, conns *fastConns) {
	st := conns.add(c)
	if st == nil {
		_ = c.Close()
		return
	}
	defer conns.remove(c)
	br := bufio.NewReaderSize(c, 16<<10)
	bw := bufio.NewWriterSize(c, 16<<10)
	sc := &fastScratch{}
	var deadline time.Time
	for {
		// The deadline first: a drain that starts after the check below
		// cuts the wait short. It is moved when less than half of the
		// idle timeout is left, not at every request (a runtime timer
		// changed under its lock).
		if now := time.Now(); deadline.Sub(now) < idleTimeout/2 || conns.draining() {
			deadline = now.Add(idleTimeout)
			_ = c.SetReadDeadline(deadline)
		}
		if !conns.busy(st, false) {
			_ = c.Close()
			return
		}
		head, err := peekHead(br)
		if err != nil {
			if !errors.Is(err, errNotFast) {
				_ = bw.Flush()
				_ = c.Close()
				return
			}
		}
		var fr fastRequest
		ok := err == nil
		if ok {
			fr, ok = s.parseHead(head)
		}
		var body []byte
		if ok {
			body, err = br.Peek(len(head) + fr.bodyLen)
			if err != nil {
				_ = c.Close()
				return
			}
			body = body[len(head):]
		}
		var q *query
		if ok {
			q, ok = s.fastQuery(fr.at, body, sc)
		}
		if !ok {
			// net/http answers this request and the rest.
			if bw.Flush() != nil {
				_ = c.Close()
				return
			}
			_ = c.SetReadDeadline(time.Time{})
			if !h.give(&bufferedConn{Conn: c, r: br}) {
				_ = c.Close()
			}
			return
		}
		conns.busy(st, true)
		_, _ = br.Discard(len(head) + fr.bodyLen)
		start := time.Now()
		status, out, version := s.fastAnswer(q, sc)
		closing := fr.closeConn || conns.draining() || s.draining.Load()
		writeFastResponse(bw, status, out, version, closing)
		s.m.request(endpointIndex(endpoints[fr.at]), status, time.Since(start))
		if closing || br.Buffered() == 0 {
			if bw.Flush() != nil || closing {
				_ = c.Close()
				return
			}
		}
	}
}

var errNotFast = errors.New("not a fast request head")

// peekHead waits for a whole request head in br and returns it
// (unconsumed), or errNotFast when it grows past maxFastHeader.
func peekHead(br *bufio.Reader) ([]byte, error) {
	// What is buffered first; one more byte only when it holds no head.
	for n := max(br.Buffered(), 1); ; {
		b, err := br.Peek(n)
		if err != nil {
			return nil, err
		}
		if i := bytes.Index(b, crlfcrlf); i >= 0 {
			return b[:i+4], nil
		}
		if len(b) >= maxFastHeader {
			return nil, errNotFast
		}
		n = max(br.Buffered(), len(b)+1)
	}
}

// fastScratch is a connection's memory for its requests, one at a time:
// the parsed body, the query (its points converted in place) and the
// answer's JSON, reused so that a one-point request allocates little.
type fastScratch struct {
	in  jsonQuery
	q   query
	out []byte
}

// fastQuery reads a body in the plain shape into sc; false for any
// other, or any refusal (net/http then answers it, with the error naming
// the field).
func (s *Server) fastQuery(k endpoint, body []byte, sc *fastScratch) (*query, bool) {
	if !fastQueryInto(body, &sc.in) {
		return nil, false
	}
	q := &sc.q
	*q = query{}
	var err error
	if q.lat, q.lon, err = pointsInPlace(sc.in.Lat, sc.in.Lon, s.cfg.MaxPoints); err != nil {
		return nil, false
	}
	if err := s.finish(q, k, sc.in.K, sc.in.MaxM, sc.in.RadiusM, sc.in.List); err != nil {
		return nil, false
	}
	q.scalar = sc.in.Lat.scalar && sc.in.Lon.scalar
	return q, len(q.lat) > 0 && len(q.lat) <= s.cfg.BatchPoints
}

// fastAnswer answers q: the status, the JSON body (in sc.out) and the
// version.
func (s *Server) fastAnswer(q *query, sc *fastScratch) (int, []byte, uint64) {
	a, err := s.b.submit(context.Background(), q)
	jw := jsonWriter{b: sc.out[:0]}
	defer func() { sc.out = jw.b }()
	if err != nil {
		status, field := statusOf(err)
		writeErrorJSON(&jw, err, field)
		return status, jw.b, 0
	}
	defer a.snap.release()
	s.m.answered(len(q.lat), a.engine)
	writeAnswerJSON(&jw, q, &a, q.scalar)
	return http.StatusOK, jw.b, a.snap.version
}

// writeFastResponse buffers one response (errors surface at the flush).
func writeFastResponse(bw *bufio.Writer, status int, body []byte, version uint64, closing bool) {
	bw.WriteString("HTTP/1.1 ")
	writeUint(bw, uint64(status))
	bw.WriteString(" ")
	bw.WriteString(http.StatusText(status))
	if version > 0 {
		bw.WriteString("\r\nGeoknn-Reference-Version: ")
		writeUint(bw, version)
	}
	bw.WriteString("\r\nContent-Type: application/json\r\nContent-Length: ")
	writeUint(bw, uint64(len(body)))
	if closing {
		bw.WriteString("\r\nConnection: close")
	}
	bw.WriteString("\r\n\r\n")
	_, _ = bw.Write(body)
}

// writeUint writes v in decimal a byte at a time: formatting it into a
// string, or a buffer handed to Write, would allocate on every response.
func writeUint(bw *bufio.Writer, v uint64) {
	var num [20]byte
	i := len(num)
	for {
		i--
		num[i] = byte('0' + v%10)
		if v /= 10; v == 0 {
			break
		}
	}
	for _, c := range num[i:] {
		_ = bw.WriteByte(c)
	}
}
