package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/geoknn/geoknn/internal/cputime"
)

// runHTTP sends JSON nearest queries, -points a request, over -clients
// keep-alive connections (as wrk holds them), -inflight pipelined on
// each (as Redis's clients pipeline), each pipeline sent once the last
// is answered. It reports the CPU time a request of the load generator
// and, where the server's /metrics has process_cpu_seconds_total, of the
// server: on one machine they share the cores.
func runHTTP(ctx context.Context, c config) error {
	host := strings.TrimPrefix(strings.TrimRight(c.url, "/"), "http://")
	reqs := nearestRequests(c, host)
	srv0, srvOK := serverCPU(ctx, c)
	cpu0, _ := cputime.Process()
	var n int
	var el time.Duration
	var lats []time.Duration
	var err error
	if c.eventLoop() {
		n, el, lats, err = runLoops(ctx, c, host, reqs)
	} else {
		n, el, lats, err = runConns(ctx, c, host, reqs)
	}
	if err != nil {
		return err
	}
	cpu1, _ := cputime.Process()
	cpu := cpu1 - cpu0
	srv1, srv1OK := serverCPU(ctx, c)
	what := fmt.Sprintf("knn serve JSON nearest, %d clients, %d points a request", c.clients, c.points)
	if c.inflight > 1 {
		what += fmt.Sprintf(", pipeline %d (latency a pipeline)", c.inflight)
	}
	report(what, n*c.inflight, n*c.inflight*c.points, el, lats)
	perReq := func(d time.Duration) float64 { return d.Seconds() * 1e6 / float64(max(n*c.inflight, 1)) }
	if cpu > 0 {
		line := fmt.Sprintf("  CPU a request: load generator %.1f us (%s)", perReq(cpu), c.engineName())
		if srvOK && srv1OK {
			line += fmt.Sprintf(", server %.1f us", perReq(srv1-srv0))
		}
		fmt.Println(line)
	}
	return nil
}

// eventLoop reports whether -mode http runs epoll event loops.
func (c config) eventLoop() bool { return c.threads > 0 && haveEventLoop }

func (c config) engineName() string {
	if c.eventLoop() {
		return fmt.Sprintf("%d event-loop threads", min(c.threads, c.clients))
	}
	return "a goroutine a connection"
}

// nearestRequests are the requests sent, whole HTTP/1.1 messages: 4096
// distinct bodies of -points points each, encoded once.
func nearestRequests(c config, host string) [][]byte {
	const distinct = 4096
	lat, lon := queryPoints(distinct*c.points, c.seed)
	reqs := make([][]byte, distinct)
	for r := range reqs {
		body := []byte(`{"lat":[`)
		for j := range c.points {
			if j > 0 {
				body = append(body, ',')
			}
			body = strconv.AppendFloat(body, lat[r*c.points+j], 'f', 6, 64)
		}
		body = append(body, `],"lon":[`...)
		for j := range c.points {
			if j > 0 {
				body = append(body, ',')
			}
			body = strconv.AppendFloat(body, lon[r*c.points+j], 'f', 6, 64)
		}
		body = append(body, "]}"...)
		head := "POST /v1/nearest HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n"
		if c.token != "" {
			head += "Authorization: Bearer " + c.token + "\r\n"
		}
		reqs[r] = append([]byte(head+"\r\n"), body...)
	}
	return reqs
}

// runConns is runHTTP's goroutine a connection (-threads 0, or a system
// without the event loop).
func runConns(ctx context.Context, c config, host string, reqs [][]byte) (int, time.Duration, []time.Duration, error) {
	conns := make([]*rawConn, c.clients)
	for i := range conns {
		cn, err := net.Dial("tcp", host)
		if err != nil {
			return 0, 0, nil, err
		}
		defer cn.Close()
		conns[i] = &rawConn{r: bufio.NewReaderSize(cn, 1<<16), w: bufio.NewWriterSize(cn, 1<<16)}
	}
	cfg := c
	cfg.inflight = 1
	n, _, el, lats, err := slots(ctx, cfg, func(slot, i int) (int, error) {
		rc := conns[slot]
		for j := range c.inflight {
			if _, err := rc.w.Write(reqs[(slot*7919+i*c.inflight+j)%len(reqs)]); err != nil {
				return 0, err
			}
		}
		if err := rc.w.Flush(); err != nil {
			return 0, err
		}
		for range c.inflight {
			if err := rc.readResponse(); err != nil {
				return 0, err
			}
		}
		return c.inflight * c.points, nil
	})
	return n, el, lats, err
}

// rawConn is one HTTP/1.1 keep-alive connection, spoken directly: the
// load generator's own cost a request must stay far below the server's.
type rawConn struct {
	r *bufio.Reader
	w *bufio.Writer
}

// readResponse reads one response, failing on any status but 200.
func (c *rawConn) readResponse() error {
	for n := max(c.r.Buffered(), 1); ; {
		b, err := c.r.Peek(n)
		if err != nil && len(b) < n {
			return err
		}
		size, err := parseResponse(b)
		if err != nil {
			return err
		}
		if size > 0 {
			_, err = c.r.Discard(size)
			return err
		}
		if n = max(c.r.Buffered(), n+1); n > c.r.Size() {
			return errors.New("a response larger than the read buffer")
		}
	}
}

var crlfcrlf = []byte("\r\n\r\n")

// parseResponse reads the response at the start of b: its size, 0 while
// b does not hold it whole, an error for any status but 200 or a
// response without a Content-Length.
func parseResponse(b []byte) (int, error) {
	end := bytes.Index(b, crlfcrlf)
	if end < 0 {
		return 0, nil
	}
	head := b[:end+2]
	line, rest, _ := bytes.Cut(head, []byte("\r\n"))
	if !bytes.HasPrefix(line, []byte("HTTP/1.1 200 ")) {
		return 0, fmt.Errorf("server answered %q", line)
	}
	length := -1
	for len(rest) > 0 {
		var h []byte
		h, rest, _ = bytes.Cut(rest, []byte("\r\n"))
		name, value, ok := bytes.Cut(h, []byte(":"))
		if ok && len(name) == len("Content-Length") && bytes.EqualFold(name, []byte("Content-Length")) {
			n, err := strconv.Atoi(string(bytes.TrimSpace(value)))
			if err != nil || n < 0 {
				return 0, fmt.Errorf("Content-Length %q", value)
			}
			length = n
		}
	}
	if length < 0 {
		return 0, errors.New("response without Content-Length")
	}
	if length > len(b)-(end+4) { // not whole yet (and no sum to overflow)
		return 0, nil
	}
	return end + 4 + length, nil
}

// serverCPU is the server's process_cpu_seconds_total (from /metrics),
// false where it has none.
func serverCPU(ctx context.Context, c config) (time.Duration, bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(c.url, "/")+"/metrics", nil)
	if err != nil {
		return 0, false
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "process_cpu_seconds_total "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return time.Duration(f * 1e9), err == nil
		}
	}
	return 0, false
}
