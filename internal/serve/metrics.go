package serve

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"
	"sync/atomic"
	"time"

	"github.com/geoknn/geoknn/internal/cputime"
)

// The counters are striped: every request adds to several, from every
// core at once, and one shared cache line (a float sum's compare-and-swap
// loop worst of all) is a queue of cores at hundreds of thousands of
// requests a second. An add goes to a stripe picked at random (the
// runtime's per-thread generator: no shared state); a read sums them.
const stripes = 16

// stripe is one cache line's counter.
type stripe struct {
	v atomic.Uint64
	_ [56]byte
}

// counter is a striped monotonic counter.
type counter struct{ s [stripes]stripe }

func (c *counter) Add(n uint64) { c.s[rand.Uint32()%stripes].v.Add(n) }

func (c *counter) Load() uint64 {
	var n uint64
	for i := range c.s {
		n += c.s[i].v.Load()
	}
	return n
}

// gauge is a striped up-down count: its stripes wrap below zero, their
// sum does not.
type gauge struct{ c counter }

func (g *gauge) Add(n int64) { g.c.Add(uint64(n)) }

func (g *gauge) Load() int64 { return int64(g.c.Load()) }

// histogram is a Prometheus histogram with fixed upper bounds; its sum is
// kept in units of 1/scale (nanoseconds for seconds), an integer added
// without a compare-and-swap loop.
type histogram struct {
	bounds []float64
	scale  float64
	counts []counter // one a bound, then +Inf
	sum    counter
}

func newHistogram(scale float64, bounds ...float64) *histogram {
	return &histogram{bounds: bounds, scale: scale, counts: make([]counter, len(bounds)+1)}
}

func (h *histogram) observe(v float64) {
	i := sort.SearchFloat64s(h.bounds, v)
	h.counts[i].Add(1)
	h.sum.Add(uint64(math.Round(v * h.scale)))
}

func (h *histogram) write(w io.Writer, name, help string) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name)
	var cum uint64
	for i, b := range h.bounds {
		cum += h.counts[i].Load()
		fmt.Fprintf(w, "%s_bucket{le=\"%g\"} %d\n", name, b, cum)
	}
	cum += h.counts[len(h.bounds)].Load()
	sum := float64(h.sum.Load()) / h.scale
	fmt.Fprintf(w, "%s_bucket{le=\"+Inf\"} %d\n%s_sum %g\n%s_count %d\n", name, cum, name, sum, name, cum)
}

// metrics are the server's counters, written in Prometheus text format.
type metrics struct {
	// requests counts answers by endpoint and status, without a lock:
	// every request adds one.
	requests [len(endpoints)][len(codes)]counter

	points        counter
	batchRequests *histogram
	batchPoints   *histogram
	latency       *histogram
	engineNanos   counter
	updates       counter
	moved         counter
	// inFlight counts the requests net/http is answering; the fast
	// path's are its connections marked busy, counted when read (two
	// shared adds a request fewer).
	inFlight gauge
}

func newMetrics() *metrics {
	return &metrics{
		batchRequests: newHistogram(1, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024),
		batchPoints:   newHistogram(1, 1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576),
		latency: newHistogram(1e9, 25e-6, 50e-6, 100e-6, 200e-6, 500e-6, 1e-3, 2e-3, 5e-3, 10e-3, 25e-3, 50e-3,
			100e-3, 250e-3, 500e-3, 1, 2.5, 5, 10),
	}
}

// endpoints and codes name the rows and columns of metrics.requests;
// codes ends with "other".
var (
	endpoints = [...]string{"nearest", "knearest", "within", "references", "metrics", "other"}
	codes     = [...]int{200, 400, 401, 404, 405, 408, 413, 422, 499, 500, 503, 504, 0}
)

func endpointIndex(e string) int {
	for i, n := range endpoints {
		if n == e {
			return i
		}
	}
	return len(endpoints) - 1
}

func (m *metrics) request(endpoint int, status int, d time.Duration) {
	c := len(codes) - 1
	for i, code := range codes[:c] {
		if code == status {
			c = i
			break
		}
	}
	m.requests[endpoint][c].Add(1)
	m.latency.observe(d.Seconds())
}

// answered counts a query's points and its engine time.
func (m *metrics) answered(points int, engine time.Duration) {
	m.points.Add(uint64(points))
	m.engineNanos.Add(uint64(engine))
}

func (m *metrics) batch(requests, points int) {
	m.batchRequests.observe(float64(requests))
	m.batchPoints.observe(float64(points))
}

func (m *metrics) write(w io.Writer, version uint64, refs int, inFlight int64, draining bool) {
	fmt.Fprintf(w, "# HELP geoknn_requests_total HTTP requests answered, by endpoint and status.\n# TYPE geoknn_requests_total counter\n")
	for e, name := range endpoints {
		for c, code := range codes {
			if n := m.requests[e][c].Load(); n > 0 {
				label := "other"
				if code != 0 {
					label = fmt.Sprint(code)
				}
				fmt.Fprintf(w, "geoknn_requests_total{endpoint=%q,code=%q} %d\n", name, label, n)
			}
		}
	}
	m.latency.write(w, "geoknn_request_duration_seconds", "Time from a request's arrival to its answer.")
	m.batchRequests.write(w, "geoknn_batch_requests", "Requests answered by one engine call.")
	m.batchPoints.write(w, "geoknn_batch_points", "Points answered by one engine call.")
	drain := 0
	if draining {
		drain = 1
	}
	fmt.Fprintf(w, "# HELP geoknn_points_total Query points answered.\n# TYPE geoknn_points_total counter\ngeoknn_points_total %d\n", m.points.Load())
	fmt.Fprintf(w, "# HELP geoknn_engine_seconds_total Time spent in engine calls.\n# TYPE geoknn_engine_seconds_total counter\ngeoknn_engine_seconds_total %g\n", float64(m.engineNanos.Load())/1e9)
	fmt.Fprintf(w, "# HELP geoknn_reference_updates_total Update requests applied.\n# TYPE geoknn_reference_updates_total counter\ngeoknn_reference_updates_total %d\n", m.updates.Load())
	fmt.Fprintf(w, "# HELP geoknn_references_moved_total References moved or replaced by updates.\n# TYPE geoknn_references_moved_total counter\ngeoknn_references_moved_total %d\n", m.moved.Load())
	fmt.Fprintf(w, "# HELP geoknn_reference_version The reference set's version, as answers report it.\n# TYPE geoknn_reference_version gauge\ngeoknn_reference_version %d\n", version)
	fmt.Fprintf(w, "# HELP geoknn_references The number of references.\n# TYPE geoknn_references gauge\ngeoknn_references %d\n", refs)
	fmt.Fprintf(w, "# HELP geoknn_in_flight_requests Requests being answered.\n# TYPE geoknn_in_flight_requests gauge\ngeoknn_in_flight_requests %d\n", inFlight)
	if cpu, ok := cputime.Process(); ok {
		fmt.Fprintf(w, "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total %.6f\n", cpu.Seconds())
	}
	fmt.Fprintf(w, "# HELP geoknn_draining 1 while the server drains for shutdown.\n# TYPE geoknn_draining gauge\ngeoknn_draining %d\n", drain)
}
