package serve

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/geoknn/geoknn"
)

// Request buffers: the budget bounds the bytes held, a freed buffer is
// reused by the next request it holds, and the kept ones stay within the
// budget.
func TestRequestBufs(t *testing.T) {
	p := newRequestBufs(100)
	ctx := context.Background()
	// waits reports whether getting n bytes waits (for 20 ms, then gives
	// up): whether the budget is short of them.
	waits := func(n int) bool {
		soon, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		rb, err := p.get(soon, n)
		if err == nil {
			p.put(rb)
		}
		return err != nil
	}
	a, err := p.get(ctx, 60)
	if err != nil || len(a.b) != 60 || a.weight != 60 {
		t.Fatalf("get 60: %v, %d bytes", err, len(a.b))
	}
	if !waits(60) || waits(40) {
		t.Fatal("60 bytes held: 60 more must wait and 40 not")
	}
	first := &a.b[0]
	p.put(a)
	b, err := p.get(ctx, 50)
	if err != nil || len(b.b) != 50 || &b.b[0] != first || b.weight != 60 {
		t.Fatalf("get 50 after a 60 was freed: %v, reused %v, weight %d", err, err == nil && &b.b[0] == first, b.weight)
	}
	if !waits(41) || waits(40) {
		t.Fatal("a kept buffer of 60 handed out for 50 counts 60")
	}
	p.put(b)
	c, err := p.get(ctx, 100) // larger than any kept: the kept one is dropped
	if err != nil || &c.b[0] == first {
		t.Fatalf("get 100: %v", err)
	}
	p.put(c)
	if p.kept > p.budget || len(p.free) != 1 {
		t.Fatalf("kept %d bytes in %d buffers, budget %d", p.kept, len(p.free), p.budget)
	}
	big, err := p.get(ctx, 150) // over the budget: waits for all of it
	if err != nil || len(big.b) != 150 || big.weight != 100 {
		t.Fatalf("get 150: %v", err)
	}
	if !waits(1) {
		t.Fatal("a byte held beside a body of the whole budget")
	}
	p.put(big)
	if p.kept > p.budget {
		t.Fatalf("kept %d bytes, budget %d", p.kept, p.budget)
	}
	// An answer larger than its body (float32 or compressed columns) is
	// counted before it is made.
	small, err := p.get(ctx, 16)
	if err != nil {
		t.Fatal(err)
	}
	index, metres, err := p.answer(ctx, small, []uint32{1, 2, 3, 4, 5, 6}, []float32{1, 2, 3, 4, 5, 6})
	if err != nil || small.weight != 72 || index[5] != 6 || metres[5] != 6*EarthRadius {
		t.Fatalf("answer of 6 in 16 bytes: %v, weight %d", err, small.weight)
	}
	if !waits(29) || waits(28) {
		t.Fatal("an answer's 72 bytes not counted")
	}
	p.put(small)
}

// A bulk request whose upload stalls holds no engine slot: with one
// slot, another bulk request is answered meanwhile, exactly.
func TestBulkUploadHoldsNoSlot(t *testing.T) {
	s, hs, r := newTest(t, 500, false, func(c *Config) { c.BulkSlots = 1; c.QueryTimeout = time.Minute })
	qlat, qlon := uniform(6000, 9) // 96 KB of body: a bulk request
	body := arrowBody(t, qlat, qlon, nil)
	pw, stalled := stallUpload(t, hs.URL+"/v1/nearest", body)
	for s.inFlight() < 1 {
		time.Sleep(time.Millisecond)
	}
	cols, _, err := postArrow(t, hs.URL+"/v1/nearest", body)
	if err != nil || cols == nil {
		t.Fatalf("the second request: %v", err)
	}
	x, err := cpuOpen(geoknn.Radians64(r.lat, r.lon))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	want, err := x.Nearest(context.Background(), geoknn.Radians64(radians(qlat), radians(qlon)))
	if err != nil {
		t.Fatal(err)
	}
	ix, dm := cols["ref_index"].(*array.Uint32), cols["distance_m"].(*array.Float64)
	for i := range qlat {
		if ix.Value(i) != want.Index[i] || dm.Value(i) != float64(want.DistanceRad[i])*EarthRadius {
			t.Fatalf("point %d: %d at %g m, in-process %d", i, ix.Value(i), dm.Value(i), want.Index[i])
		}
	}
	if _, err := pw.Write(body[len(body)/2:]); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if a := <-stalled; a.err != nil || a.status != http.StatusOK {
		t.Fatalf("the stalled request: %d %s %v", a.status, a.body, a.err)
	}
}

// An upload that stops is answered 408, naming the body, once the query
// timeout has passed; the server goes on answering.
func TestStalledUploadTimesOut(t *testing.T) {
	_, hs, _ := newTest(t, 500, false, func(c *Config) { c.QueryTimeout = 300 * time.Millisecond })
	for _, body := range [][]byte{
		arrowBodyOf(t, 6000), // a bulk request
		arrowBodyOf(t, 100),  // a small Arrow request
		jsonBodyOf(2000),     // a JSON body, cut inside its lat array
	} {
		_, stalled := stallUpload(t, hs.URL+"/v1/nearest", body)
		a := <-stalled
		if a.err != nil || a.status != http.StatusRequestTimeout || !strings.Contains(a.body, `"body"`) {
			t.Fatalf("a stalled upload of %d bytes: %d %s %v", len(body), a.status, a.body, a.err)
		}
	}
	if _, _, err := postArrow(t, hs.URL+"/v1/nearest", arrowBodyOf(t, 6000)); err != nil {
		t.Fatal(err)
	}
}

// A k-nearest bulk answer is sent without its slot: with one slot,
// while a client leaves its large answer unread, another bulk request is
// answered.
func TestBulkDownloadHoldsNoSlot(t *testing.T) {
	const n = 1 << 16 // 32 nearest a point: 40 MiB of answer, more than the sockets hold
	s, hs, _ := newTest(t, 500, false, func(c *Config) { c.BulkSlots, c.QueryTimeout = 1, time.Minute })
	conn, err := net.Dial("tcp", strings.TrimPrefix(hs.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := arrowBodyOf(t, n)
	head := "POST /v1/knearest?k=32 HTTP/1.1\r\nHost: x\r\nContent-Type: " + arrowStreamType +
		"\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	if _, err := conn.Write(append([]byte(head), body...)); err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); s.m.points.Load() < n; time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > 30*time.Second {
			t.Fatal("the k-nearest request not answered within 30 s")
		}
	}
	// Within 20 s, where a slot held through the download would keep it a
	// minute (the query timeout of the answer's sending).
	hc := &http.Client{Timeout: 20 * time.Second}
	resp, err := hc.Post(hs.URL+"/v1/nearest", arrowStreamType, bytes.NewReader(arrowBodyOf(t, 6000)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the second request: %d %v", resp.StatusCode, err)
	}
}

// A client that stops reading its answer holds its request only until
// the query timeout after the answer's sending began: the handler ends,
// and with a budget of one body the next bulk request is answered.
func TestStalledDownloadLetsGo(t *testing.T) {
	const n = 1 << 21
	body := arrowBodyOf(t, n) // its answer 24 MiB: more than the sockets hold
	s, hs, _ := newTest(t, 500, false, func(c *Config) {
		c.BulkSlots, c.BulkBytes, c.QueryTimeout = 1, int64(len(body)), 3*time.Second
	})
	conn, err := net.Dial("tcp", strings.TrimPrefix(hs.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	head := "POST /v1/nearest HTTP/1.1\r\nHost: x\r\nContent-Type: " + arrowStreamType +
		"\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	if _, err := conn.Write(append([]byte(head), body...)); err != nil {
		t.Fatal(err)
	}
	// Answered (or, on a slow machine, timed out in the engine) and ended.
	ended := func() (n uint64) {
		row := &s.m.requests[endpointIndex("nearest")]
		for i := range row {
			n += row[i].Load()
		}
		return n
	}
	for start := time.Now(); ended() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > 30*time.Second {
			t.Fatal("the stalled request not ended within 30 s")
		}
	}
	if _, _, err := postArrow(t, hs.URL+"/v1/nearest", body); err != nil {
		t.Fatal(err)
	}
}

// arrowBodyOf is an Arrow query body of n uniform points.
func arrowBodyOf(t *testing.T, n int) []byte {
	lat, lon := uniform(n, 11)
	return arrowBody(t, lat, lon, nil)
}

// jsonBodyOf is a JSON query body of n points.
func jsonBodyOf(n int) []byte {
	nums := strings.TrimSuffix(strings.Repeat("12.5,", n), ",")
	return []byte(`{"lat":[` + nums + `],"lon":[` + nums + `]}`)
}

// reply is an answer's status and body, or the error getting it.
type reply struct {
	status int
	body   string
	err    error
}

// stallUpload posts body to url, sending its first half only until the
// test writes the rest to pw (closed at the test's end); the answer
// comes on the channel.
func stallUpload(t *testing.T, url string, body []byte) (pw *io.PipeWriter, answer chan reply) {
	t.Helper()
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.Close() })
	req, err := http.NewRequest(http.MethodPost, url, pr)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(len(body))
	ct := arrowStreamType
	if body[0] == '{' {
		ct = "application/json"
	}
	req.Header.Set("Content-Type", ct)
	answer = make(chan reply, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answer <- reply{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		answer <- reply{resp.StatusCode, string(b), err}
	}()
	if _, err := pw.Write(body[:len(body)/2]); err != nil {
		t.Fatal(err)
	}
	return pw, answer
}
