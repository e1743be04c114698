package serve

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// BenchmarkNearestJSON is one-point JSON requests from parallel clients
// over loopback (the server and the clients share the cores).
func BenchmarkNearestJSON(b *testing.B) {
	lat, lon := uniform(1<<16, 1)
	s, err := New(b.Context(), Config{Open: cpuOpen, LatRad: radians(lat), LonRad: radians(lon), Workers: 2, BatchWait: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	hs := newLoopback(b, s)
	qlat, qlon := uniform(4096, 2)
	bodies := make([][]byte, len(qlat))
	for i := range qlat {
		bodies[i] = []byte(`{"lat":[` + strconv.FormatFloat(qlat[i], 'f', 6, 64) + `],"lon":[` + strconv.FormatFloat(qlon[i], 'f', 6, 64) + `]}`)
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			resp, err := hc.Post(hs+"/v1/nearest", "application/json", bytes.NewReader(bodies[i%len(bodies)]))
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			i++
		}
	})
}

// discardWriter is a ResponseWriter that counts and drops the answer, so
// that a benchmark times the server's side alone.
type discardWriter struct {
	h http.Header
	n int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(int)             {}
func (w *discardWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// BenchmarkArrowBulk is one bulk Arrow nearest request of 2^20 points
// through the handler, with no socket: the server's CPU cost of a bulk
// request. overhead-ms/op is that cost less the engine's time.
func BenchmarkArrowBulk(b *testing.B) {
	lat, lon := uniform(1<<16, 1)
	s, err := New(b.Context(), Config{Open: cpuOpen, LatRad: radians(lat), LonRad: radians(lon)})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	qlat, qlon := uniform(1<<20, 2)
	body := arrowBody(b, qlat, qlon, nil)
	h := s.Handler()
	serve := func() {
		req, _ := http.NewRequest(http.MethodPost, "/v1/nearest", bytes.NewReader(body))
		req.Header.Set("Content-Type", arrowStreamType)
		req.ContentLength = int64(len(body))
		w := &discardWriter{h: http.Header{}}
		h.ServeHTTP(w, req)
		if w.n == 0 {
			b.Fatal("no answer")
		}
	}
	serve()
	engine0 := s.m.engineNanos.Load()
	b.ResetTimer()
	for range b.N {
		serve()
	}
	el := b.Elapsed()
	eng := time.Duration(s.m.engineNanos.Load() - engine0)
	b.ReportMetric(float64(eng.Nanoseconds())/1e6/float64(b.N), "engine-ms/op")
	b.ReportMetric(float64((el-eng).Nanoseconds())/1e6/float64(b.N), "overhead-ms/op")
}

// BenchmarkMoveAll moves every one of 2^16 references in one Arrow
// request through the handler: a version a request.
func BenchmarkMoveAll(b *testing.B) {
	const n = 1 << 16
	lat, lon := uniform(n, 1)
	s, err := New(b.Context(), Config{Open: cpuOpen, LatRad: radians(lat), LonRad: radians(lon)})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = strconv.Itoa(i)
	}
	bodies := make([][]byte, 4)
	for i := range bodies {
		mlat, mlon := uniform(n, uint64(10+i))
		bodies[i] = arrowBody(b, mlat, mlon, ids)
	}
	h := s.Handler()
	b.ResetTimer()
	for i := range b.N {
		body := bodies[i%len(bodies)]
		req, _ := http.NewRequest(http.MethodPost, "/v1/references", bytes.NewReader(body))
		req.Header.Set("Content-Type", arrowStreamType)
		req.ContentLength = int64(len(body))
		w := &discardWriter{h: http.Header{}}
		h.ServeHTTP(w, req)
		if w.n == 0 || w.h.Get("Content-Type") != "application/json" {
			b.Fatal("no answer")
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "moves/s")
}

// BenchmarkFastRequest is the fast path's server-side work for a one-point
// JSON request, without the socket: parse the head and body, answer (in
// a batch when goroutines overlap), write the response. Parallel: the
// goroutines are clients sharing the batcher.
func BenchmarkFastRequest(b *testing.B) { benchFast(b, 1) }

func benchFast(b *testing.B, parallelism int) {
	lat, lon := uniform(1<<16, 1)
	s, err := New(b.Context(), Config{Open: cpuOpen, LatRad: radians(lat), LonRad: radians(lon), Workers: 2, BatchWait: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	qlat, qlon := uniform(4096, 2)
	reqs := make([][]byte, len(qlat))
	for i := range qlat {
		body := `{"lat":[` + strconv.FormatFloat(qlat[i], 'f', 6, 64) + `],"lon":[` + strconv.FormatFloat(qlon[i], 'f', 6, 64) + `]}`
		reqs[i] = []byte("POST /v1/nearest HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
			strconv.Itoa(len(body)) + "\r\n\r\n" + body)
	}
	b.ReportAllocs()
	b.SetParallelism(parallelism)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		bw := bufio.NewWriter(io.Discard)
		sc := &fastScratch{}
		for i := 0; pb.Next(); i++ {
			req := reqs[i%len(reqs)]
			h := bytes.Index(req, crlfcrlf) + 4
			fr, ok := s.parseHead(req[:h])
			if !ok {
				b.Error("not fast")
				return
			}
			q, ok := s.fastQuery(fr.at, req[h:h+fr.bodyLen], sc)
			if !ok {
				b.Error("not fast")
				return
			}
			status, out, version := s.fastAnswer(q, sc)
			writeFastResponse(bw, status, out, version, false)
		}
	})
}

// BenchmarkFastRequestMany is BenchmarkFastRequest with 64 clients a
// core: batches form, and the shared state is contended.
func BenchmarkFastRequestMany(b *testing.B) {
	benchFast(b, 64)
}
