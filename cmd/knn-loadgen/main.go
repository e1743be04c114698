// Command knn-loadgen drives a running knn serve (or, for the side by
// side, a Redis server's GEOSEARCH) with many concurrent clients and
// reports throughput and latency percentiles; it also times the
// in-process API on the same references, and moving every reference.
// The BENCHMARKS.md figures and .ci/gpu-serve-bench use it.
//
//	knn-loadgen -mode http -url http://127.0.0.1:8427 -clients 8 -duration 10s
//	knn-loadgen -mode http -clients 8 -inflight 64           # 64 requests in flight a client
//	knn-loadgen -mode http -clients 8 -points 64             # 64 points a request
//	knn-loadgen -mode arrow -points 1048576 -repeat 5        # bulk Arrow requests
//	knn-loadgen -mode inproc -refs 65536 -points 1048576     # the in-process API
//	knn-loadgen -mode move -refs 65536 -move-batch 4096      # move every reference
//	knn-loadgen -mode redis -redis 127.0.0.1:6379 -refs 65536 -clients 8
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/client"
	"github.com/geoknn/geoknn/sphere"
)

type config struct {
	mode, url, redis, token, engine string
	clients, inflight, points       int
	threads                         int
	refs, moveBatch, repeat         int
	duration                        time.Duration
	seed                            uint64
	radiusKm                        float64
}

func main() {
	var c config
	flag.StringVar(&c.mode, "mode", "http", "http (JSON, -inflight pipelined a client), arrow (bulk), inproc, move, redis")
	flag.StringVar(&c.url, "url", "http://127.0.0.1:8427", "knn serve's base URL")
	flag.StringVar(&c.redis, "redis", "127.0.0.1:6379", "Redis address (-mode redis)")
	flag.StringVar(&c.engine, "engine", "auto", "engine of -mode inproc")
	flag.IntVar(&c.clients, "clients", 8, "concurrent clients (connections)")
	flag.IntVar(&c.inflight, "inflight", 1, "requests in flight a client (Redis: pipeline depth)")
	flag.IntVar(&c.points, "points", 1, "points a request")
	flag.IntVar(&c.threads, "threads", max(runtime.NumCPU()/2, 1), "-mode http: event-loop threads (epoll; 0: a goroutine a connection)")
	flag.IntVar(&c.refs, "refs", 1<<16, "references: the count knn serve was started with (-mode inproc, move, redis)")
	flag.IntVar(&c.moveBatch, "move-batch", 4096, "references a move request (-mode move)")
	flag.IntVar(&c.repeat, "repeat", 5, "bulk requests (-mode arrow, inproc)")
	flag.DurationVar(&c.duration, "duration", 10*time.Second, "how long to send")
	flag.Uint64Var(&c.seed, "seed", 7, "seed of the query points")
	flag.Float64Var(&c.radiusKm, "radius-km", 100, "GEOSEARCH BYRADIUS (-mode redis)")
	cpuProfile := flag.String("cpu-profile", "", "write the load generator's Go CPU profile (go tool pprof) to this file")
	flag.Parse()
	c.token = os.Getenv("GEOKNN_TOKEN")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := profiled(*cpuProfile, func() error { return run(ctx, c) }); err != nil {
		fmt.Fprintln(os.Stderr, "knn-loadgen:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, c config) error {
	switch c.mode {
	case "http":
		return runHTTP(ctx, c)
	case "arrow":
		return runArrow(ctx, c)
	case "inproc":
		return runInProc(ctx, c)
	case "move":
		return runMove(ctx, c)
	case "redis":
		return runRedis(ctx, c)
	}
	return fmt.Errorf("unknown -mode %q", c.mode)
}

// queryPoints are n points uniform on the sphere (sphere.Sphere, as the
// serve tests' and knn's generated points), degrees.
func queryPoints(n int, seed uint64) (lat, lon []float64) {
	lat, lon = make([]float64, n), make([]float64, n)
	for i, p := range sphere.Sphere(n, seed) {
		lat[i], lon[i] = p.Lat(), p.Lon()
	}
	return lat, lon
}

// refPoints are knn serve's --ref COUNT references (generator sphere,
// seed 1), degrees.
func refPoints(n int) (lat, lon []float64) { return queryPoints(n, 1) }

// report prints a run's throughput and latency percentiles.
func report(what string, requests, points int, elapsed time.Duration, lat []time.Duration) {
	slices.Sort(lat)
	pct := func(p float64) string {
		if len(lat) == 0 {
			return "-"
		}
		i := min(int(p*float64(len(lat))), len(lat)-1)
		return fmt.Sprintf("%.0f us", float64(lat[i].Nanoseconds())/1e3)
	}
	fmt.Printf("%s: %d requests, %d points in %.2f s: %.0f requests/s, %.0f points/s; latency p50 %s, p99 %s, p99.9 %s\n",
		what, requests, points, elapsed.Seconds(), float64(requests)/elapsed.Seconds(), float64(points)/elapsed.Seconds(),
		pct(0.5), pct(0.99), pct(0.999))
}

// slots runs fn on clients*inflight goroutines until the duration ends,
// each recording its requests' latencies.
func slots(ctx context.Context, c config, fn func(slot int, i int) (points int, err error)) (int, int, time.Duration, []time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, c.duration)
	defer cancel()
	n := c.clients * c.inflight
	lats := make([][]time.Duration, n)
	var requests, points atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for s := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				t := time.Now()
				p, err := fn(s, i)
				if err != nil {
					if ctx.Err() == nil {
						firstErr.CompareAndSwap(nil, err)
						cancel()
					}
					return
				}
				lats[s] = append(lats[s], time.Since(t))
				requests.Add(1)
				points.Add(int64(p))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err, _ := firstErr.Load().(error); err != nil {
		return 0, 0, 0, nil, err
	}
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	return int(requests.Load()), int(points.Load()), elapsed, all, nil
}

func httpClient(conns int) *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true,
		DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext}}
}

func post(ctx context.Context, hc *http.Client, url, ctype, token string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", ctype)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %d %s", url, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return b, nil
}

// runArrow sends bulk Arrow requests of -points points from -clients
// clients at once, -repeat each, after one warm-up each: throughput
// counts them all (the target is points/s, which concurrent bulk
// requests may share), latency is each request's.
func runArrow(ctx context.Context, c config) error {
	lat, lon := queryPoints(c.points, c.seed)
	body, err := client.ArrowPoints(lat, lon, nil)
	if err != nil {
		return err
	}
	hc := httpClient(c.clients)
	url := strings.TrimRight(c.url, "/") + "/v1/nearest"
	bufs := make([][]byte, c.clients)
	for i := range bufs {
		if bufs[i], err = postInto(ctx, hc, url, c.token, body, bufs[i]); err != nil {
			return err
		}
	}
	lats := make([][]time.Duration, c.clients)
	errs := make([]error, c.clients)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range c.clients {
		wg.Go(func() {
			for range c.repeat {
				t := time.Now()
				if bufs[i], errs[i] = postInto(ctx, hc, url, c.token, body, bufs[i]); errs[i] != nil {
					return
				}
				lats[i] = append(lats[i], time.Since(t))
			}
		})
	}
	wg.Wait()
	el := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return err
	}
	all := slices.Concat(lats...)
	report(fmt.Sprintf("knn serve Arrow nearest, %d points a request, %d clients", c.points, c.clients), len(all), len(all)*c.points, el, all)
	return nil
}

// postInto posts an Arrow body and reads the answer into buf (grown to
// its Content-Length): the load generator's own cost a bulk answer, on
// the server's machine, must not be a fresh buffer grown piece by piece.
func postInto(ctx context.Context, hc *http.Client, url, token string, body, buf []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return buf, err
	}
	req.Header.Set("Content-Type", "application/vnd.apache.arrow.stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return buf, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return buf, fmt.Errorf("%s: %d %s", url, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	if resp.ContentLength < 0 { // a chunked answer (servers before 2026-11)
		return io.ReadAll(resp.Body)
	}
	if int64(cap(buf)) < resp.ContentLength {
		buf = make([]byte, resp.ContentLength)
	}
	buf = buf[:resp.ContentLength]
	_, err = io.ReadFull(resp.Body, buf)
	return buf, err
}

// runInProc times the in-process API on the same references and points
// as -mode arrow: degrees in, as the server takes them.
func runInProc(ctx context.Context, c config) error {
	rlat, rlon := refPoints(c.refs)
	eng, err := geoknn.ParseEngine(c.engine)
	if err != nil {
		return err
	}
	toRad := func(d []float64) []float64 {
		out := make([]float64, len(d))
		for i, v := range d {
			out[i] = v * math.Pi / 180
		}
		return out
	}
	x, err := geoknn.NewIndex(geoknn.Radians64(toRad(rlat), toRad(rlon)), geoknn.Options{Engine: eng})
	if err != nil {
		return err
	}
	defer x.Close()
	lat, lon := queryPoints(c.points, c.seed)
	pts := geoknn.Radians64(toRad(lat), toRad(lon))
	res := geoknn.NewResult(c.points)
	if err := x.NearestInto(ctx, pts, res); err != nil {
		return err
	}
	var lats []time.Duration
	start := time.Now()
	for range c.repeat {
		t := time.Now()
		if err := x.NearestInto(ctx, pts, res); err != nil {
			return err
		}
		lats = append(lats, time.Since(t))
	}
	report(fmt.Sprintf("in-process Index.NearestInto (%s), %d points a query", res.Stats.Engine, c.points), c.repeat, c.repeat*c.points, time.Since(start), lats)
	return nil
}

// runMove moves every reference (by index: knn serve --ref COUNT has no
// id column), -move-batch a request, from -clients clients, -repeat
// times over.
func runMove(ctx context.Context, c config) error {
	hc := httpClient(c.clients)
	url := strings.TrimRight(c.url, "/") + "/v1/references"
	var bodies [][]byte
	for from := 0; from < c.refs; from += c.moveBatch {
		to := min(from+c.moveBatch, c.refs)
		lat, lon := queryPoints(to-from, c.seed+uint64(from))
		ids := make([]string, to-from)
		for i := range ids {
			ids[i] = strconv.Itoa(from + i)
		}
		b, err := client.ArrowPoints(lat, lon, ids)
		if err != nil {
			return err
		}
		bodies = append(bodies, b)
	}
	var lats []time.Duration
	var mu sync.Mutex
	start := time.Now()
	for range c.repeat {
		next := atomic.Int64{}
		var wg sync.WaitGroup
		errs := make(chan error, c.clients)
		for range c.clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1) - 1)
					if i >= len(bodies) {
						return
					}
					t := time.Now()
					if _, err := post(ctx, hc, url, "application/vnd.apache.arrow.stream", c.token, bodies[i]); err != nil {
						errs <- err
						return
					}
					mu.Lock()
					lats = append(lats, time.Since(t))
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			return err
		}
	}
	el := time.Since(start)
	report(fmt.Sprintf("knn serve moves (Arrow), %d references a request, %d clients", c.moveBatch, c.clients), len(lats), c.repeat*c.refs, el, lats)
	fmt.Printf("  = %.0f references moved/s\n", float64(c.repeat*c.refs)/el.Seconds())
	return nil
}

// runRedis loads the same references into a Redis GEO key (GEOADD,
// timed: the move rate), then queries GEOSEARCH BYRADIUS ASC COUNT 1
// WITHDIST from clients connections, inflight commands pipelined each.
func runRedis(ctx context.Context, c config) error {
	rlat, rlon := refPoints(c.refs)
	conn, err := net.Dial("tcp", c.redis)
	if err != nil {
		return err
	}
	rc := &resp{conn: conn, r: bufio.NewReaderSize(conn, 1<<16), w: bufio.NewWriterSize(conn, 1<<16)}
	if _, err := rc.do("DEL", "geoknn"); err != nil {
		return err
	}
	const perCmd = 1024
	for round := range max(c.repeat, 1) {
		start := time.Now()
		cmds := 0
		for from := 0; from < c.refs; from += perCmd {
			args := []string{"GEOADD", "geoknn"}
			for i := from; i < min(from+perCmd, c.refs); i++ {
				// Redis's GEO cells stop at +-85.05 degrees.
				la := max(min(rlat[i], 85.05), -85.05)
				args = append(args, strconv.FormatFloat(rlon[i], 'f', 6, 64), strconv.FormatFloat(la, 'f', 6, 64), strconv.Itoa(i))
			}
			rc.send(args...)
			cmds++
		}
		if err := rc.w.Flush(); err != nil {
			return err
		}
		for range cmds {
			if _, err := rc.read(); err != nil {
				return err
			}
		}
		if round == max(c.repeat, 1)-1 {
			el := time.Since(start)
			fmt.Printf("redis GEOADD of all %d references (%d a command, pipelined): %.3f s = %.0f updates/s\n",
				c.refs, perCmd, el.Seconds(), float64(c.refs)/el.Seconds())
		}
	}
	conn.Close()
	const distinct = 4096
	lat, lon := queryPoints(distinct, c.seed)
	conns := make([]*resp, c.clients)
	for i := range conns {
		cn, err := net.Dial("tcp", c.redis)
		if err != nil {
			return err
		}
		defer cn.Close()
		conns[i] = &resp{conn: cn, r: bufio.NewReaderSize(cn, 1<<16), w: bufio.NewWriterSize(cn, 1<<16)}
	}
	radius := strconv.FormatFloat(c.radiusKm, 'f', -1, 64)
	misses := atomic.Int64{}
	cfg := c
	cfg.inflight = 1
	reqs, _, el, lats, err := slots(ctx, cfg, func(slot, i int) (int, error) {
		rc := conns[slot]
		for j := range c.inflight {
			p := (slot*7919 + i*c.inflight + j) % distinct
			la := max(min(lat[p], 85.05), -85.05)
			rc.send("GEOSEARCH", "geoknn", "FROMLONLAT", strconv.FormatFloat(lon[p], 'f', 6, 64), strconv.FormatFloat(la, 'f', 6, 64),
				"BYRADIUS", radius, "km", "ASC", "COUNT", "1", "WITHDIST")
		}
		if err := rc.w.Flush(); err != nil {
			return 0, err
		}
		for range c.inflight {
			v, err := rc.read()
			if err != nil {
				return 0, err
			}
			if a, ok := v.([]any); ok && len(a) == 0 {
				misses.Add(1)
			}
		}
		return c.inflight, nil
	})
	if err != nil {
		return err
	}
	report(fmt.Sprintf("redis GEOSEARCH BYRADIUS %s km ASC COUNT 1, %d clients, pipeline %d (latency a pipeline)", radius, c.clients, c.inflight),
		reqs*c.inflight, reqs*c.inflight, el, lats)
	fmt.Printf("  %d of %d answers empty (no reference within the radius)\n", misses.Load(), reqs*c.inflight)
	return nil
}

// resp is a minimal RESP2 client: enough for GEOADD and GEOSEARCH.
type resp struct {
	conn net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
}

func (c *resp) send(args ...string) {
	fmt.Fprintf(c.w, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(c.w, "$%d\r\n%s\r\n", len(a), a)
	}
}

func (c *resp) do(args ...string) (any, error) {
	c.send(args...)
	if err := c.w.Flush(); err != nil {
		return nil, err
	}
	return c.read()
}

func (c *resp) read() (any, error) {
	line, err := c.r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return nil, errors.New("redis: empty reply line")
	}
	switch line[0] {
	case '+', ':':
		return line[1:], nil
	case '-':
		return nil, errors.New("redis: " + line[1:])
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return nil, err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			return nil, err
		}
		out := make([]any, 0, max(n, 0))
		for range n {
			v, err := c.read()
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("redis: unexpected reply %q", line)
}

// profiled runs fn, under the Go CPU profiler when path is set.
func profiled(path string, fn func() error) error {
	if path == "" {
		return fn()
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		return errors.Join(err, f.Close())
	}
	err = fn()
	pprof.StopCPUProfile()
	return errors.Join(err, f.Close())
}
