// Package serve is knn serve: references kept resident in one engine
// (the GPUs or the CPU), answering nearest, k-nearest and within-radius
// queries over HTTP (JSON or Arrow IPC stream bodies) to many clients at
// once, batching requests that arrive together into one engine call, and
// moving references live: every answer names the reference version it
// was computed against, and every version is one consistent set.
package serve

import (
	"bytes"
	"context"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/geoknn/geoknn"
)

// EarthRadius is the sphere's radius in metres: distances are angles
// times it.
const EarthRadius = geoknn.EarthRadiusMetres

const noNeighbour = geoknn.NoNeighbour

// Config is a server's references, engine and limits. Zero limits take
// the defaults named.
type Config struct {
	// Open prepares the first reference set on the engine; every later
	// version is prepared on the same engine (Index.Replaced).
	Open func(ref geoknn.Points) (*geoknn.Index, error)
	// LatRad, LonRad are the references in radians (kept: not modified
	// after New); IDs their id column, or nil.
	LatRad, LonRad []float64
	IDs            []string
	// Engine names the engine, for /healthz.
	Engine string
	// Token, when set, is required as "Authorization: Bearer TOKEN" on
	// every endpoint but /healthz.
	Token string
	// MaxBodyBytes limits a request body (default 256 MiB).
	MaxBodyBytes int64
	// MaxPoints limits the points of one request (default 1<<22).
	MaxPoints int
	// MaxK limits k (default 1024).
	MaxK int
	// QueryTimeout bounds a query's time in the server (default 30 s):
	// its body's upload from its arrival (408 after it), its engine call,
	// and the sending of its answer.
	QueryTimeout time.Duration
	// BatchWait is how long a batch waits for more requests while the
	// engine is busy (default 200 us; negative: never).
	BatchWait time.Duration
	// BatchPoints is the most points one batched engine call answers;
	// larger requests go to the engine alone (default 256: the CPU
	// index's largest query on one core; the GPUs want more).
	BatchPoints int
	// Workers is the number of batches answered side by side (default 1).
	Workers int
	// BulkSlots is the number of bulk (Arrow, 64 KiB and more) requests
	// answered by the engine at once, each in buffers kept for the next,
	// page-locked on GPUs (default 4). Their uploads and downloads do not
	// hold a slot.
	BulkSlots int
	// BulkBytes bounds the memory of the bulk requests' bodies and
	// nearest answers in use at once (default BulkSlots x MaxBodyBytes);
	// as much again is kept for reuse.
	BulkBytes int64
	Logger    *slog.Logger
}

func (c *Config) defaults() {
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = 256 << 20
	}
	if c.MaxPoints <= 0 {
		c.MaxPoints = 1 << 22
	}
	if c.MaxK <= 0 {
		c.MaxK = 1024
	}
	if c.QueryTimeout <= 0 {
		c.QueryTimeout = 30 * time.Second
	}
	if c.BatchWait == 0 {
		c.BatchWait = 200 * time.Microsecond
	}
	if c.BatchPoints <= 0 {
		c.BatchPoints = 256
	}
	if c.Workers <= 0 {
		c.Workers = 1
	}
	if c.BulkSlots <= 0 {
		c.BulkSlots = 4
	}
	if c.BulkBytes <= 0 {
		c.BulkBytes = int64(c.BulkSlots) * c.MaxBodyBytes
		if c.BulkBytes/int64(c.BulkSlots) != c.MaxBodyBytes {
			c.BulkBytes = math.MaxInt64 // overflowed: unbounded
		}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Server answers queries against its references until Close.
type Server struct {
	cfg      Config
	store    refStore
	b        *batcher
	u        *updater
	bulkPool *bulkPool
	// requestBufs hold bulk requests' bodies and answers.
	requestBufs *requestBufs
	m           *metrics
	mux         *http.ServeMux
	draining    atomic.Bool
	fast        atomic.Pointer[fastConns] // Serve's fast-path connections
	cancel      context.CancelFunc
	started     time.Time
}

// New prepares the references (version 1) and starts the batcher and
// the updater; ctx bounds their life, Close ends them.
func New(ctx context.Context, cfg Config) (*Server, error) {
	cfg.defaults()
	if cfg.Open == nil {
		return nil, errors.New("serve: no engine (Config.Open)")
	}
	if len(cfg.LatRad) != len(cfg.LonRad) {
		return nil, fmt.Errorf("serve: %d latitudes for %d longitudes", len(cfg.LatRad), len(cfg.LonRad))
	}
	snap, err := newSnapshot(1, cfg.LatRad, cfg.LonRad, cfg.IDs, nil, cfg.Open)
	if err != nil {
		return nil, fmt.Errorf("serve: references: %w", err)
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &Server{cfg: cfg, m: newMetrics(), cancel: cancel, started: time.Now()}
	s.store.publish(snap)
	s.b = newBatcher(ctx, &s.store, cfg.Workers, cfg.BatchPoints, cfg.BatchWait, cfg.QueryTimeout, s.m)
	s.u = newUpdater(ctx, &s.store, s.m, cfg.Logger)
	s.bulkPool = newBulkPool(cfg.BulkSlots)
	s.requestBufs = newRequestBufs(cfg.BulkBytes)
	s.routes()
	return s, nil
}

// Close stops the batcher and the updater and releases the engine: call
// it after the HTTP server has drained.
func (s *Server) Close() error {
	s.draining.Store(true)
	s.b.close()
	s.u.close()
	s.cancel()
	// The bulk buffers are unpinned while the engine that pinned them is
	// open.
	err := s.bulkPool.close()
	s.store.close()
	return err
}

// Drain marks the server as shutting down: /healthz answers 503 so that
// a load balancer stops sending, while requests in flight are answered.
func (s *Server) Drain() { s.draining.Store(true) }

// Handler is the server's HTTP interface. It sets its connections' read
// and write deadlines itself, from the query timeout (a request's body
// from its arrival, an answer from its sending): an http.Server's own
// ReadTimeout and WriteTimeout give way to them.
func (s *Server) Handler() http.Handler { return s.mux }

func (s *Server) routes() {
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("GET /healthz", s.healthz)
	s.mux.Handle("GET /metrics", s.auth("metrics", s.metricsPage))
	for path, k := range map[string]endpoint{"nearest": atNearest, "knearest": atKNearest, "within": atWithin} {
		s.mux.Handle("POST /v1/"+path, s.auth(path, func(w http.ResponseWriter, r *http.Request) error { return s.query(w, r, k) }))
		s.mux.Handle("GET /v1/"+path, s.auth(path, func(w http.ResponseWriter, r *http.Request) error { return s.query(w, r, k) }))
	}
	s.mux.Handle("POST /v1/references", s.auth("references", s.update))
	s.mux.Handle("GET /v1/references", s.auth("references", s.references))
}

// auth wraps a handler with the token check, the metrics and the error
// answer.
func (s *Server) auth(endpoint string, h func(http.ResponseWriter, *http.Request) error) http.Handler {
	ei := endpointIndex(endpoint)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		s.m.inFlight.Add(1)
		defer s.m.inFlight.Add(-1)
		status := http.StatusOK
		var err error
		if s.cfg.Token != "" && !s.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="geoknn"`)
			err = &requestError{status: http.StatusUnauthorized, field: "Authorization", msg: "a bearer token is required"}
		} else {
			r.Body = s.limitBody(w, r, start)
			err = h(w, r)
		}
		if err != nil {
			var field string
			status, field = statusOf(err)
			if status >= 500 && !errors.Is(err, errDraining) {
				s.cfg.Logger.Error("request failed", "endpoint", endpoint, "status", status, "err", err)
			}
			jw := &jsonWriter{}
			writeErrorJSON(jw, err, field)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write(jw.b)
		}
		s.m.request(ei, status, time.Since(start))
	})
}

func (s *Server) authorized(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(h, "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.Token)) == 1
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	snap := s.store.acquire()
	if snap == nil || s.draining.Load() {
		if snap != nil {
			snap.release()
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"status":"draining"}` + "\n"))
		return
	}
	defer snap.release()
	fmt.Fprintf(w, `{"status":"ok","engine":%q,"version":%d,"references":%d,"ids":%t}`+"\n", s.cfg.Engine, snap.version, snap.Len(), snap.ids != nil)
}

func (s *Server) metricsPage(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	var version uint64
	var n int
	if snap := s.store.acquire(); snap != nil {
		version, n = snap.version, snap.Len()
		snap.release()
	}
	s.m.write(w, version, n, s.inFlight(), s.draining.Load())
	return nil
}

// inFlight counts the requests being answered, on both paths.
func (s *Server) inFlight() int64 { return s.m.inFlight.Load() + s.fast.Load().answering() }

func (s *Server) references(w http.ResponseWriter, r *http.Request) error {
	snap := s.store.acquire()
	if snap == nil {
		return errDraining
	}
	defer snap.release()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"version":%d,"references":%d,"ids":%t}`+"\n", snap.version, snap.Len(), snap.ids != nil)
	return nil
}

// isArrow says whether a request's body (or wanted answer) is an Arrow
// IPC stream.
func isArrow(ct string) bool {
	ct, _, _ = strings.Cut(ct, ";")
	ct = strings.TrimSpace(strings.ToLower(ct))
	return ct == arrowStreamType || ct == "application/vnd.apache.arrow.file" || ct == "application/x-arrow"
}

const arrowStreamType = "application/vnd.apache.arrow.stream"

// query answers a nearest, k-nearest or within request.
func (s *Server) query(w http.ResponseWriter, r *http.Request, k endpoint) error {
	if s.draining.Load() {
		w.Header().Set("Connection", "close")
	}
	var q *query
	var scalar bool
	var err error
	arrowIn := r.Method == http.MethodPost && isArrow(r.Header.Get("Content-Type"))
	switch {
	case arrowIn && r.ContentLength >= bulkMin && r.ContentLength <= s.cfg.MaxBodyBytes:
		return s.bulk(w, r, k)
	case arrowIn:
		q, err = s.arrowQuery(r, k)
	case r.Method == http.MethodGet:
		q, scalar, err = s.urlQuery(r, k)
	default:
		q, scalar, err = s.jsonQuery(r, k)
	}
	if err != nil {
		return err
	}
	return s.respond(w, r, q, arrowIn, scalar)
}

// respond answers q and writes the answer in the request's format.
func (s *Server) respond(w http.ResponseWriter, r *http.Request, q *query, arrowIn, scalar bool) error {
	a, err := s.answerOf(r, q)
	if err != nil {
		return err
	}
	return s.send(w, r, q, a, arrowIn, scalar)
}

// answerOf answers q, counted in the metrics. A batched query's engine
// call is bounded by the batch's timeout; a query alone on the engine
// gets its own.
func (s *Server) answerOf(r *http.Request, q *query) (answer, error) {
	ctx := r.Context()
	if len(q.lat) > s.cfg.BatchPoints {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.cfg.QueryTimeout)
		defer cancel()
	}
	a, err := s.answer(ctx, q)
	if err != nil {
		return answer{}, err
	}
	s.m.answered(len(q.lat), a.engine)
	return a, nil
}

// send writes a, q's answer, in the request's format, and lets go of its
// references.
func (s *Server) send(w http.ResponseWriter, r *http.Request, q *query, a answer, arrowIn, scalar bool) error {
	defer a.snap.release()
	w.Header().Set("Geoknn-Reference-Version", strconv.FormatUint(a.snap.version, 10))
	if arrowIn || isArrow(r.Header.Get("Accept")) {
		return s.sendWithin(w, func() error { return writeAnswerArrow(w, q, &a) })
	}
	jw := jsonWriter{b: make([]byte, 0, 64+48*len(q.lat))}
	writeAnswerJSON(&jw, q, &a, scalar)
	w.Header().Set("Content-Type", "application/json")
	return s.sendWithin(w, func() error {
		_, err := w.Write(jw.b)
		return ignoreWriteErr(err)
	})
}

// sendWithin writes an answer through write under a write deadline of
// the query timeout from now, flushed before the deadline is cleared (a
// deadline left would fail the connection's next answer): a client that
// stops reading holds the request's memory no longer.
func (s *Server) sendWithin(w http.ResponseWriter, write func() error) error {
	rc := http.NewResponseController(w)
	if rc.SetWriteDeadline(time.Now().Add(s.cfg.QueryTimeout)) != nil {
		return write() // a connection without deadlines
	}
	defer rc.SetWriteDeadline(time.Time{})
	err := write()
	if err == nil {
		_ = rc.Flush() // nothing to answer a client that has gone
	}
	return err
}

// ignoreWriteErr drops the error of writing to a client that has gone:
// there is no one left to answer.
func ignoreWriteErr(error) error { return nil }

// answer runs q in a batch, or alone when it is larger than a batch.
func (s *Server) answer(ctx context.Context, q *query) (answer, error) {
	if len(q.lat) <= s.cfg.BatchPoints && len(q.lat) > 0 {
		return s.b.submit(ctx, q)
	}
	snap := s.store.acquire()
	if snap == nil {
		return answer{}, errDraining
	}
	if len(q.lat) == 0 {
		return answer{snap: snap, counts: []uint32{}, offsets: []uint64{0}}, nil
	}
	a, err := answerOn(ctx, snap, q)
	if err != nil {
		snap.release()
		return answer{}, err
	}
	s.m.batch(1, len(q.lat))
	return a, nil
}

// finish checks a query's options for the endpoint it came to and sets
// its question.
func (s *Server) finish(q *query, at endpoint, kk *int, maxM, radiusM *float64, list bool) error {
	q.ask = geoknn.Query{}
	var err error
	switch at {
	case atNearest:
		if kk != nil || maxM != nil || radiusM != nil || list {
			return fieldErr("k", "nearest takes points only: k and max_m are for /v1/knearest, radius_m and list for /v1/within")
		}
	case atKNearest:
		if kk == nil {
			return fieldErr("k", "required")
		}
		if *kk < 1 || *kk > s.cfg.MaxK {
			return fieldErr("k", fmt.Sprintf("%d: from 1 to %d (--max-k)", *kk, s.cfg.MaxK))
		}
		if radiusM != nil || list {
			return fieldErr("radius_m", "radius_m and list are for /v1/within; k nearest takes max_m")
		}
		q.ask.K = *kk
		q.ask.MaxMetres, err = checkMetres("max_m", maxM, false)
	case atWithin:
		if kk != nil || maxM != nil {
			return fieldErr("k", "within takes radius_m (and list), not k or max_m")
		}
		q.ask.Within, q.ask.List = true, list
		q.ask.RadiusMetres, err = checkMetres("radius_m", radiusM, true)
	}
	return err
}

func (s *Server) jsonQuery(r *http.Request, k endpoint) (*query, bool, error) {
	var in jsonQuery
	body, err := readSmall(r)
	if err != nil {
		return nil, false, err
	}
	var ok bool
	if body != nil {
		in, ok = fastQuery(body)
	}
	if !ok {
		var rd io.Reader = r.Body
		if body != nil {
			rd = bytes.NewReader(body)
		}
		in = jsonQuery{}
		if err := decodeJSON(rd, &in); err != nil {
			return nil, false, err
		}
	}
	q := &query{}
	if q.lat, q.lon, err = pointsInPlace(in.Lat, in.Lon, s.cfg.MaxPoints); err != nil {
		return nil, false, err
	}
	if err := s.finish(q, k, in.K, in.MaxM, in.RadiusM, in.List); err != nil {
		return nil, false, err
	}
	return q, in.Lat.scalar && in.Lon.scalar, nil
}

// smallBody is the largest body read whole for the fast parser.
const smallBody = 4096

// readSmall reads a body known to be small (its Content-Length at most
// smallBody); nil for others, which are decoded as they stream.
func readSmall(r *http.Request) ([]byte, error) {
	if r.ContentLength < 0 || r.ContentLength > smallBody {
		return nil, nil
	}
	b := make([]byte, r.ContentLength)
	if err := readBodyInto(r, b); err != nil {
		return nil, err
	}
	return b, nil
}

// readBodyInto reads r's body, of b's length (its Content-Length), into
// b: a body cut short is the client's fault, a limit or a deadline passed
// answers as its own.
func readBodyInto(r *http.Request, b []byte) error {
	if _, err := io.ReadFull(r.Body, b); err != nil {
		if isMaxBytes(err) || isRequestErr(err) {
			return err
		}
		return badRequest("body", "shorter than its Content-Length")
	}
	return nil
}

// urlQuery reads a GET query's parameters: one point, lat and lon.
func (s *Server) urlQuery(r *http.Request, k endpoint) (*query, bool, error) {
	v := r.URL.Query()
	num := func(name string) (*float64, error) {
		if !v.Has(name) {
			return nil, nil
		}
		f, err := strconv.ParseFloat(v.Get(name), 64)
		if err != nil {
			return nil, badRequest(name, fmt.Sprintf("%q is not a number", v.Get(name)))
		}
		return &f, nil
	}
	lat, err := num("lat")
	if err != nil {
		return nil, false, err
	}
	lon, err := num("lon")
	if err != nil {
		return nil, false, err
	}
	if lat == nil || lon == nil {
		return nil, false, fieldErr("lat", "lat and lon are required")
	}
	q := &query{}
	if q.lat, q.lon, err = pointsOf(numbers{v: []float64{*lat}}, numbers{v: []float64{*lon}}, s.cfg.MaxPoints); err != nil {
		return nil, false, err
	}
	kk, maxM, radiusM, list, err := urlOptions(r)
	if err != nil {
		return nil, false, err
	}
	return q, true, s.finish(q, k, kk, maxM, radiusM, list)
}

// urlOptions reads k, max_m, radius_m and list from a URL's query.
func urlOptions(r *http.Request) (kk *int, maxM, radiusM *float64, list bool, err error) {
	v := r.URL.Query()
	if v.Has("k") {
		n, perr := strconv.Atoi(v.Get("k"))
		if perr != nil {
			return nil, nil, nil, false, badRequest("k", fmt.Sprintf("%q is not an integer", v.Get("k")))
		}
		kk = &n
	}
	for name, p := range map[string]**float64{"max_m": &maxM, "radius_m": &radiusM} {
		if v.Has(name) {
			f, perr := strconv.ParseFloat(v.Get(name), 64)
			if perr != nil {
				return nil, nil, nil, false, badRequest(name, fmt.Sprintf("%q is not a number", v.Get(name)))
			}
			*p = &f
		}
	}
	if v.Has("list") {
		list, err = strconv.ParseBool(v.Get("list"))
		if err != nil {
			return nil, nil, nil, false, badRequest("list", fmt.Sprintf("%q is not true or false", v.Get("list")))
		}
	}
	return kk, maxM, radiusM, list, nil
}

// Serve answers on ln until ctx ends, then drains: the listener closes
// (new connections refused), requests in flight are answered, for at most
// drain; then the engine is released. A nil error is a clean drain.
func (s *Server) Serve(ctx context.Context, ln net.Listener, drain time.Duration, tlsCert, tlsKey string) error {
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		// In-flight requests outlive the signal that starts the drain.
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
		ErrorLog:    slog.NewLogLogger(s.cfg.Logger.Handler(), slog.LevelDebug),
	}
	if tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(tlsCert, tlsKey)
		if err != nil {
			return errors.Join(fmt.Errorf("TLS: %w", err), ln.Close(), s.Close())
		}
		// HTTP/1.1 only: the fast path speaks it, and hands on to net/http.
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"},
			MinVersion: tls.VersionTLS12})
	}
	h := newHandoff(ln.Addr())
	conns := &fastConns{}
	s.fast.Store(conns)
	errc := make(chan error, 2)
	go func() { errc <- hs.Serve(h) }()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					time.Sleep(5 * time.Millisecond)
					continue
				}
				if !errors.Is(err, net.ErrClosed) {
					errc <- err
				}
				return
			}
			go s.serveFast(c, h, conns)
		}
	}()
	var err error
	select {
	case err = <-errc:
		_ = ln.Close()
	case <-ctx.Done():
		s.Drain()
		s.cfg.Logger.Info("draining", "in_flight", s.inFlight())
		_ = ln.Close()
		conns.startDrain()
		dctx, cancel := context.WithTimeout(context.Background(), drain)
		err = hs.Shutdown(dctx)
		waited := make(chan struct{})
		go func() {
			conns.wg.Wait()
			close(waited)
		}()
		select {
		case <-waited:
		case <-dctx.Done():
			err = errors.Join(err, dctx.Err())
		}
		cancel()
		if err != nil {
			err = fmt.Errorf("drain: %w", err)
			_ = hs.Close()
		}
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return errors.Join(err, s.Close())
}
