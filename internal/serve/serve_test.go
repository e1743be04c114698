package serve

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/client"
	"github.com/geoknn/geoknn/sphere"
)

// cpuOpen prepares references on the CPU engine, two workers: CI's
// machine has two cores.
func cpuOpen(p geoknn.Points) (*geoknn.Index, error) {
	return geoknn.NewIndex(p, geoknn.Options{Engine: geoknn.CPU, CPUWorkers: 2})
}

// uniform returns n points uniform on the sphere (sphere.Sphere, as
// knn-loadgen's and knn's generated points), in degrees.
func uniform(n int, seed uint64) (lat, lon []float64) {
	lat, lon = make([]float64, n), make([]float64, n)
	for i, p := range sphere.Sphere(n, seed) {
		lat[i], lon[i] = p.Lat(), p.Lon()
	}
	return lat, lon
}

func radians(deg []float64) []float64 {
	out := make([]float64, len(deg))
	for i, d := range deg {
		out[i] = d * degToRad
	}
	return out
}

// haversine is the float64 great-circle distance in metres (radians in).
func haversine(lat1, lon1, lat2, lon2 float64) float64 {
	s1, s2 := math.Sin((lat2-lat1)/2), math.Sin((lon2-lon1)/2)
	a := s1*s1 + math.Cos(lat1)*math.Cos(lat2)*s2*s2
	return 2 * EarthRadius * math.Asin(math.Min(1, math.Sqrt(a)))
}

// refs is a version of the references, in radians, for brute force.
type refs struct{ lat, lon []float64 }

// sorted is every reference's distance from a point, nearest first,
// ties to the lower index.
func (r refs) sorted(lat, lon float64) ([]int, []float64) {
	idx := make([]int, len(r.lat))
	d := make([]float64, len(r.lat))
	for i := range r.lat {
		idx[i], d[i] = i, haversine(lat, lon, r.lat[i], r.lon[i])
	}
	sortByDist(idx, d)
	out := make([]float64, len(idx))
	for j, i := range idx {
		out[j] = d[i]
	}
	return idx, out
}

func sortByDist(idx []int, d []float64) {
	// insertion sort is too slow for thousands; use the library's.
	sortSlice(idx, func(a, b int) bool {
		if d[a] != d[b] {
			return d[a] < d[b]
		}
		return a < b
	})
}

// checkNeighbour checks that reference got at gotM metres is an exact
// rank-th neighbour of the point: within 1 m of the true rank-th distance,
// and its reported distance within 1 m of its true one.
func checkNeighbour(t *testing.T, r refs, lat, lon float64, trueD []float64, rank int, got uint32, gotM float64) {
	t.Helper()
	if int(got) >= len(r.lat) {
		t.Fatalf("index %d out of range", got)
	}
	d := haversine(lat, lon, r.lat[got], r.lon[got])
	if math.Abs(d-trueD[rank]) > 1 || math.Abs(gotM-d) > 1 {
		t.Fatalf("rank %d: got ref %d at %.3f m (true %.3f m), best %.3f m", rank, got, gotM, d, trueD[rank])
	}
}

func newTest(t *testing.T, n int, ids bool, mod func(*Config)) (*Server, *httptest.Server, refs) {
	t.Helper()
	lat, lon := uniform(n, 1)
	cfg := Config{Open: cpuOpen, LatRad: radians(lat), LonRad: radians(lon), Workers: 2, Engine: "cpu"}
	if ids {
		cfg.IDs = make([]string, n)
		for i := range n {
			cfg.IDs[i] = "v" + strconv.Itoa(i)
		}
	}
	if mod != nil {
		mod(&cfg)
	}
	s, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		hs.Close()
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s, hs, refs{radians(lat), radians(lon)}
}

func TestQueriesJSON(t *testing.T) {
	_, hs, r := newTest(t, 4096, true, nil)
	c := client.New(hs.URL)
	ctx := context.Background()
	qlat, qlon := uniform(50, 2)
	near, err := c.Nearest(ctx, qlat, qlon)
	if err != nil {
		t.Fatal(err)
	}
	kn, err := c.KNearest(ctx, qlat, qlon, 5, 0)
	if err != nil {
		t.Fatal(err)
	}
	wl, err := c.Within(ctx, qlat, qlon, 300e3, true)
	if err != nil {
		t.Fatal(err)
	}
	wc, err := c.Within(ctx, qlat, qlon, 300e3, false)
	if err != nil {
		t.Fatal(err)
	}
	if near.Version != 1 || kn.Version != 1 || wl.Version != 1 {
		t.Fatalf("versions %d %d %d, want 1", near.Version, kn.Version, wl.Version)
	}
	for i := range qlat {
		la, lo := qlat[i]*degToRad, qlon[i]*degToRad
		_, d := r.sorted(la, lo)
		checkNeighbour(t, r, la, lo, d, 0, near.Index[i], near.DistanceM[i])
		if near.ID[i] != "v"+strconv.Itoa(int(near.Index[i])) {
			t.Fatalf("id %q for index %d", near.ID[i], near.Index[i])
		}
		for rank := range 5 {
			checkNeighbour(t, r, la, lo, d, rank, kn.Index[i][rank], kn.DistanceM[i][rank])
		}
		want := 0
		for _, dd := range d {
			if dd <= 300e3 {
				want++
			}
		}
		// Within 1 m of the radius either answer is right.
		if got := int(wc.Count[i]); got != want && math.Abs(d[min(got, want)]-300e3) > 1 {
			t.Fatalf("point %d: %d within, want %d", i, got, want)
		}
		if len(wl.Index[i]) != int(wc.Count[i]) || len(wl.ID[i]) != len(wl.Index[i]) {
			t.Fatalf("point %d: list of %d for count %d", i, len(wl.Index[i]), wc.Count[i])
		}
		for rank, ix := range wl.Index[i] {
			checkNeighbour(t, r, la, lo, d, rank, ix, wl.DistanceM[i][rank])
		}
	}
	// A k-nearest row ends where max_m cuts it.
	kc, err := c.KNearest(ctx, qlat[:1], qlon[:1], 5, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(kc.Index[0]) != 0 {
		t.Fatalf("max_m 1: %d neighbours", len(kc.Index[0]))
	}
}

// TestScalarAndGet: one point asked with scalars (or in the URL) is
// answered with scalars.
func TestScalarAndGet(t *testing.T) {
	_, hs, _ := newTest(t, 1024, false, nil)
	post := func(body string) string {
		resp, err := http.Post(hs.URL+"/v1/nearest", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	a := post(`{"lat": 10, "lon": 20}`)
	b := post(`{"lat": [10], "lon": [20]}`)
	resp, err := http.Get(hs.URL + "/v1/nearest?lat=10&lon=20")
	if err != nil {
		t.Fatal(err)
	}
	g, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.HasPrefix(a, `{"version":1,"index":`) || strings.Contains(a, "[") {
		t.Fatalf("scalar answer %s", a)
	}
	if string(g) != a {
		t.Fatalf("GET %s, POST %s", g, a)
	}
	if strings.ReplaceAll(strings.ReplaceAll(b, "[", ""), "]", "") != a {
		t.Fatalf("array answer %s, scalar %s", b, a)
	}
}

// TestBatchesEqualInProcess: many concurrent one-point requests are
// batched, and every answer equals the in-process index's.
func TestBatchesEqualInProcess(t *testing.T) {
	s, hs, r := newTest(t, 1<<14, false, func(c *Config) { c.BatchWait = 2 * time.Millisecond })
	s.b.waitMin = 1 // one-point batches wait too: batches of many form
	x, err := cpuOpen(geoknn.Radians64(r.lat, r.lon))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	qlat, qlon := uniform(800, 3)
	want, err := x.Nearest(context.Background(), geoknn.Radians64(radians(qlat), radians(qlon)))
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(hs.URL)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(qlat); i += 16 {
				a, err := c.Nearest(context.Background(), qlat[i:i+1], qlon[i:i+1])
				if err != nil {
					errs <- err
					return
				}
				wantM := float64(want.DistanceRad[i]) * EarthRadius
				if a.Index[0] != want.Index[i] || math.Abs(a.DistanceM[0]-wantM) > 0.001 {
					errs <- fmt.Errorf("point %d: %d at %f, in-process %d at %f", i, a.Index[0], a.DistanceM[0], want.Index[i], wantM)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := s.m.points.Load(); got != 800 {
		t.Fatalf("%d points counted", got)
	}
	if b := s.m.batchRequests.count(); b == 0 || b > 800 {
		t.Fatalf("%d batches for 800 requests", b)
	}
}

// arrowBody is an Arrow IPC stream of lat, lon (and ids, when given).
func arrowBody(t testing.TB, lat, lon []float64, ids []string) []byte {
	body, err := client.ArrowPoints(lat, lon, ids)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// readArrowAnswer reads an answer stream's columns by name.
func readArrowAnswer(t *testing.T, body io.Reader) (map[string]arrow.Array, string) {
	t.Helper()
	r, err := ipc.NewReader(body)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	cols := map[string]arrow.Array{}
	version, _ := r.Schema().Metadata().GetValue("reference_version")
	for r.Next() {
		rec := r.RecordBatch()
		for i, f := range rec.Schema().Fields() {
			a := rec.Column(i)
			a.Retain()
			cols[f.Name] = a
		}
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	return cols, version
}

// TestArrowQueries: answers to Arrow queries equal the in-process
// engine's, for a body read whole in fresh memory and one large enough to
// be answered in a bulk slot (twice: the slot's buffers come round).
func TestArrowQueries(t *testing.T) {
	_, hs, r := newTest(t, 4096, true, nil)
	x, err := cpuOpen(geoknn.Radians64(r.lat, r.lon))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	for _, n := range []int{3000, 9000, 5000} { // more than a batch: the engine alone
		t.Run(strconv.Itoa(n), func(t *testing.T) { arrowQueries(t, hs, x, n) })
	}
}

func arrowQueries(t *testing.T, hs *httptest.Server, x *geoknn.Index, n int) {
	qlat, qlon := uniform(n, uint64(4+n))
	pts := geoknn.Radians64(radians(qlat), radians(qlon))
	body := arrowBody(t, qlat, qlon, nil)
	post := func(path string) (map[string]arrow.Array, string) {
		resp, err := http.Post(hs.URL+path, arrowStreamType, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
		}
		return readArrowAnswer(t, resp.Body)
	}
	cols, v := post("/v1/nearest")
	if v != "1" {
		t.Fatalf("version %q", v)
	}
	want, _ := x.Nearest(context.Background(), pts)
	ix, ids, dm := cols["ref_index"].(*array.Uint32), cols["ref_id"].(*array.String), cols["distance_m"].(*array.Float64)
	for i := range qlat {
		if ix.Value(i) != want.Index[i] || ids.Value(i) != "v"+strconv.Itoa(int(want.Index[i])) ||
			dm.Value(i) != float64(want.DistanceRad[i])*EarthRadius {
			t.Fatalf("point %d: %d %s %f, in-process %d", i, ix.Value(i), ids.Value(i), dm.Value(i), want.Index[i])
		}
	}
	cols, _ = post("/v1/knearest?k=3")
	kw, _ := x.KNearest(context.Background(), pts, 3, 0)
	kix, obs := cols["ref_index"].(*array.Uint32), cols["obs_index"].(*array.Uint32)
	if kix.Len() != len(kw.Index) {
		t.Fatalf("%d rows for %d", kix.Len(), len(kw.Index))
	}
	for j := range kw.Index {
		if kix.Value(j) != kw.Index[j] || int(obs.Value(j)) != j/3 {
			t.Fatalf("row %d: %d, in-process %d", j, kix.Value(j), kw.Index[j])
		}
	}
	cols, _ = post("/v1/within?radius_m=200000")
	ww, _ := x.WithinCount(context.Background(), pts, 200e3)
	cnt := cols["count"].(*array.Uint32)
	for i := range ww.Counts {
		if cnt.Value(i) != ww.Counts[i] {
			t.Fatalf("count %d: %d, in-process %d", i, cnt.Value(i), ww.Counts[i])
		}
	}
	cols, _ = post("/v1/within?radius_m=200000&list=true")
	wl, _ := x.WithinList(context.Background(), pts, 200e3)
	lix := cols["ref_index"].(*array.Uint32)
	if lix.Len() != len(wl.Index) {
		t.Fatalf("%d list rows for %d", lix.Len(), len(wl.Index))
	}
	for j := range wl.Index {
		if lix.Value(j) != wl.Index[j] {
			t.Fatalf("list row %d: %d, in-process %d", j, lix.Value(j), wl.Index[j])
		}
	}
}

// TestUpdatesRacingQueries: while one client moves references, others
// query; every answer is exact against the version it reports.
func TestUpdatesRacingQueries(t *testing.T) {
	const n = 2048
	_, hs, r0 := newTest(t, n, true, nil)
	c := client.New(hs.URL)
	ctx := context.Background()
	var mu sync.Mutex
	versions := map[uint64]refs{1: r0}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	type got struct {
		v        uint64
		lat, lon float64
		index    uint32
		m        float64
	}
	answers := make([][]got, 4)
	errs := make(chan error, 8)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			qlat, qlon := uniform(400, uint64(10+w))
			for i := range qlat {
				select {
				case <-stop:
					return
				default:
				}
				a, err := c.Nearest(ctx, qlat[i:i+1], qlon[i:i+1])
				if err != nil {
					errs <- err
					return
				}
				answers[w] = append(answers[w], got{a.Version, qlat[i] * degToRad, qlon[i] * degToRad, a.Index[0], a.DistanceM[0]})
			}
		}()
	}
	cur := refs{append([]float64(nil), r0.lat...), append([]float64(nil), r0.lon...)}
	rng := rand.New(rand.NewPCG(7, 7))
	for step := range 30 {
		m := 1 + rng.IntN(n)
		if step%10 == 9 {
			m = n // all of them
		}
		ids := make([]string, m)
		mlat, mlon := uniform(m, uint64(100+step))
		perm := rng.Perm(n)[:m]
		next := refs{append([]float64(nil), cur.lat...), append([]float64(nil), cur.lon...)}
		for k, i := range perm {
			ids[k] = "v" + strconv.Itoa(i)
			next.lat[i], next.lon[i] = mlat[k]*degToRad, mlon[k]*degToRad
		}
		v, err := c.Move(ctx, ids, mlat, mlon)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		if _, dup := versions[v]; dup {
			t.Fatalf("version %d twice", v)
		}
		versions[v] = next
		mu.Unlock()
		cur = next
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	checked := 0
	for _, as := range answers {
		for _, a := range as {
			r, ok := versions[a.v]
			if !ok {
				t.Fatalf("answer of unknown version %d", a.v)
			}
			_, d := r.sorted(a.lat, a.lon)
			checkNeighbour(t, r, a.lat, a.lon, d, 0, a.index, a.m)
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no answers checked")
	}
}

func TestReplaceAndUnknownID(t *testing.T) {
	_, hs, _ := newTest(t, 512, true, nil)
	c := client.New(hs.URL)
	ctx := context.Background()
	_, err := c.Move(ctx, []string{"v1", "nope"}, []float64{1, 2}, []float64{1, 2})
	var e *client.Error
	if !errors.As(err, &e) || e.Status != 422 || e.Field != "id" || !strings.Contains(e.Message, "nope") {
		t.Fatalf("unknown id: %v", err)
	}
	v, err := c.Replace(ctx, []string{"a", "b"}, []float64{0, 10}, []float64{0, 10})
	if err != nil || v != 2 {
		t.Fatalf("replace: version %d, %v", v, err)
	}
	a, err := c.Nearest(ctx, []float64{9}, []float64{9})
	if err != nil || a.Version != 2 || a.ID[0] != "b" || a.Index[0] != 1 {
		t.Fatalf("after replace: %+v %v", a, err)
	}
	// Arrow update by id.
	resp, err := http.Post(hs.URL+"/v1/references", arrowStreamType, bytes.NewReader(arrowBody(t, []float64{-5}, []float64{-5}, []string{"a"})))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"version":3`) {
		t.Fatalf("arrow update: %d %s", resp.StatusCode, b)
	}
	a, err = c.Nearest(ctx, []float64{-4}, []float64{-4})
	if err != nil || a.Version != 3 || a.ID[0] != "a" {
		t.Fatalf("after arrow move: %+v %v", a, err)
	}
}

func TestBadRequests(t *testing.T) {
	_, hs, _ := newTest(t, 256, false, func(c *Config) { c.MaxPoints = 10; c.MaxBodyBytes = 4096; c.MaxK = 8 })
	big := `{"lat":[` + strings.Repeat("1,", 3000) + `1],"lon":[1]}`
	cases := []struct {
		path, ctype, body string
		status            int
		field             string
	}{
		{"/v1/nearest", "application/json", ``, 400, "body"},
		{"/v1/nearest", "application/json", `{`, 400, "body"},
		{"/v1/nearest", "application/json", `{"lat":"x","lon":1}`, 400, "lat"},
		{"/v1/nearest", "application/json", `{"lat":1,"lon":1,"zz":1}`, 400, "zz"},
		{"/v1/nearest", "application/json", `{"lat":[1,2],"lon":[1]}`, 422, "lon"},
		{"/v1/nearest", "application/json", `{"lat":91,"lon":1}`, 422, "lat"},
		{"/v1/nearest", "application/json", `{"lat":1,"lon":1000}`, 422, "lon"},
		{"/v1/nearest", "application/json", `{"lat":[1,1,1,1,1,1,1,1,1,1,1],"lon":[1,1,1,1,1,1,1,1,1,1,1]}`, 413, "lat"},
		{"/v1/nearest", "application/json", big, 413, "body"},
		{"/v1/nearest", "application/json", `{"lat":1,"lon":1,"k":2}`, 422, "k"},
		{"/v1/knearest", "application/json", `{"lat":1,"lon":1}`, 422, "k"},
		{"/v1/knearest", "application/json", `{"lat":1,"lon":1,"k":9}`, 422, "k"},
		{"/v1/knearest", "application/json", `{"lat":1,"lon":1,"k":0}`, 422, "k"},
		{"/v1/knearest", "application/json", `{"lat":1,"lon":1,"k":2,"max_m":-1}`, 422, "max_m"},
		{"/v1/within", "application/json", `{"lat":1,"lon":1}`, 422, "radius_m"},
		{"/v1/within", "application/json", `{"lat":1,"lon":1,"radius_m":0}`, 422, "radius_m"},
		{"/v1/nearest", arrowStreamType, `not arrow`, 400, "body"},
		{"/v1/nearest?", arrowStreamType, string(arrowBody(t, []float64{1}, []float64{400}, nil)), 422, "lon"},
		{"/v1/references", "application/json", `{"lat":[1],"lon":[1]}`, 422, "id"},
		{"/v1/references", "application/json", `{"id":["999"],"lat":[1],"lon":[1]}`, 422, "id"},
		{"/v1/references", "application/json", `{"id":[1.5],"lat":[1],"lon":[1]}`, 400, "body"},
	}
	for _, tc := range cases {
		resp, err := http.Post(hs.URL+tc.path, tc.ctype, strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(b), `"field":"`+tc.field+`"`) {
			t.Errorf("%s %.40q: %d %s, want %d naming %s", tc.path, tc.body, resp.StatusCode, b, tc.status, tc.field)
		}
	}
	resp, err := http.Get(hs.URL + "/v1/knearest?lat=1&lon=x&k=2")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("GET bad lon: %d", resp.StatusCode)
	}
}

func TestToken(t *testing.T) {
	_, hs, _ := newTest(t, 64, false, func(c *Config) { c.Token = "s3cret" })
	c := client.New(hs.URL)
	_, err := c.Nearest(context.Background(), []float64{1}, []float64{1})
	var e *client.Error
	if !errors.As(err, &e) || e.Status != 401 {
		t.Fatalf("no token: %v", err)
	}
	if _, err := c.Health(context.Background()); err != nil {
		t.Fatalf("healthz needs no token: %v", err)
	}
	c.Token = "s3cret"
	if _, err := c.Nearest(context.Background(), []float64{1}, []float64{1}); err != nil {
		t.Fatal(err)
	}
}

func TestMetrics(t *testing.T) {
	_, hs, _ := newTest(t, 64, false, nil)
	c := client.New(hs.URL)
	if _, err := c.Nearest(context.Background(), []float64{1, 2}, []float64{1, 2}); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(hs.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`geoknn_requests_total{endpoint="nearest",code="200"} 1`, "geoknn_points_total 2",
		"geoknn_reference_version 1", "geoknn_batch_points_bucket", "geoknn_request_duration_seconds_count", "geoknn_engine_seconds_total"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// TestDrainUnderLoad: clients keep querying while the server is told to
// stop; every request either gets a whole, right answer or is refused
// (never half an answer), and Serve returns cleanly.
func TestDrainUnderLoad(t *testing.T) {
	lat, lon := uniform(4096, 1)
	s, err := New(context.Background(), Config{Open: cpuOpen, LatRad: radians(lat), LonRad: radians(lon), Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln, 10*time.Second, "", "") }()
	c := client.New("http://" + ln.Addr().String())
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, refused := 0, 0
	started := make(chan struct{}, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			qlat, qlon := uniform(5000, uint64(w))
			for i := range qlat {
				a, err := c.Nearest(context.Background(), qlat[i:i+1], qlon[i:i+1])
				if i == 5 {
					started <- struct{}{}
				}
				mu.Lock()
				if err != nil {
					refused++
					mu.Unlock()
					var e *client.Error
					if errors.As(err, &e) && e.Status != 503 {
						t.Errorf("refused with %d: %v", e.Status, err)
					}
					return
				}
				ok++
				mu.Unlock()
				if len(a.Index) != 1 {
					t.Errorf("half an answer: %+v", a)
				}
			}
		}()
	}
	for range 8 {
		<-started
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	wg.Wait()
	if ok == 0 {
		t.Fatal("nothing answered")
	}
	t.Logf("%d answered, %d clients refused after the drain", ok, refused)
}

// newLoopback serves s on a loopback port for the test's life.
func newLoopback(tb testing.TB, s *Server) string {
	hs := httptest.NewServer(s.Handler())
	tb.Cleanup(hs.Close)
	return hs.URL
}

// serveLoopback runs s.Serve (the fast path and net/http behind it) on a
// loopback port until the test ends.
func serveLoopback(t *testing.T, s *Server) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln, 10*time.Second, "", "") }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return "http://" + ln.Addr().String()
}

// TestFastPathPipelined: pipelined requests on one connection, fast and
// not (a refusal, /healthz, Arrow), are answered in order, and the fast
// answers equal the in-process index's.
func TestFastPathPipelined(t *testing.T) {
	lat, lon := uniform(4096, 1)
	s, err := New(context.Background(), Config{Open: cpuOpen, LatRad: radians(lat), LonRad: radians(lon), Workers: 2, Token: "tk"})
	if err != nil {
		t.Fatal(err)
	}
	url := serveLoopback(t, s)
	x, err := cpuOpen(geoknn.Radians64(radians(lat), radians(lon)))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	qlat, qlon := uniform(40, 9)
	want, _ := x.Nearest(context.Background(), geoknn.Radians64(radians(qlat), radians(qlon)))
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var reqs bytes.Buffer
	post := func(path, body string, auth bool) {
		fmt.Fprintf(&reqs, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", path, len(body))
		if auth {
			reqs.WriteString("Authorization: Bearer tk\r\n")
		}
		reqs.WriteString("\r\n" + body)
	}
	for i := range qlat {
		post("/v1/nearest", fmt.Sprintf(`{"lat":%v,"lon":%v}`, qlat[i], qlon[i]), true)
	}
	post("/v1/nearest", `{"lat":1,"lon":1}`, false)       // 401, by net/http
	post("/v1/nearest", `{"lat":1,"lon":1}`, true)        // fast again? net/http has the connection now
	post("/v1/knearest", `{"lat":1,"lon":1,"k":0}`, true) // 422
	if _, err := conn.Write(reqs.Bytes()); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	for i := range qlat {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		wantBody := fmt.Sprintf(`{"version":1,"index":%d,"distance_m":%.3f}`, want.Index[i], float64(want.DistanceRad[i])*EarthRadius)
		if resp.StatusCode != 200 || strings.TrimSpace(string(b)) != wantBody || resp.Header.Get("Geoknn-Reference-Version") != "1" {
			t.Fatalf("request %d: %d %s, want %s", i, resp.StatusCode, b, wantBody)
		}
	}
	for _, status := range []int{401, 200, 422} {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != status {
			t.Fatalf("got %d %s, want %d", resp.StatusCode, b, status)
		}
	}
	// The whole suite of queries through the fast path and net/http.
	c := client.New(url)
	c.Token = "tk"
	a, err := c.KNearest(context.Background(), qlat, qlon, 3, 0)
	if err != nil || len(a.Index) != len(qlat) {
		t.Fatalf("%+v %v", a, err)
	}
	w, err := c.Within(context.Background(), qlat[:1], qlon[:1], 1e6, true)
	if err != nil || len(w.Count) != 1 {
		t.Fatalf("%+v %v", w, err)
	}
}
