package serve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// fuzzServer is one small server for a fuzz target's inputs.
func fuzzServer(f *testing.F) *Server {
	lat, lon := uniform(64, 1)
	s, err := New(context.Background(), Config{Open: cpuOpen, LatRad: radians(lat), LonRad: radians(lon),
		MaxPoints: 1000, MaxBodyBytes: 1 << 16, MaxK: 16, Workers: 1, BatchWait: -1})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = s.Close() })
	return s
}

// serveOne answers one request in process; a server fault (5xx) fails.
func serveOne(t *testing.T, s *Server, method, target, ctype string, body []byte) {
	u, err := url.ParseRequestURI(target)
	if err != nil {
		return
	}
	req := httptest.NewRequest(method, "/", strings.NewReader(string(body)))
	req.URL, req.RequestURI = u, target
	req.Header.Set("Content-Type", ctype)
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	if rec.Code >= 500 {
		t.Fatalf("%s %s %q: %d %s", method, target, body, rec.Code, rec.Body.String())
	}
}

func FuzzQueryJSON(f *testing.F) {
	s := fuzzServer(f)
	for _, seed := range []string{`{"lat":1,"lon":2}`, `{"lat":[1,2],"lon":[3,4]}`, `{"lat":[],"lon":[]}`,
		`{"lat":1,"lon":2,"k":3,"max_m":1e5}`, `{"lat":1,"lon":2,"radius_m":1e6,"list":true}`, `{"lat":[1e308],"lon":[-0]}`,
		`{"lat":null,"lon":null}`, `[]`, `{"lat":1,"lon":2}{}`, `{"k":-1}`, `{"lat":90,"lon":360,"k":64}`} {
		f.Add(seed, 0)
		f.Add(seed, 1)
		f.Add(seed, 2)
	}
	paths := []string{"/v1/nearest", "/v1/knearest", "/v1/within"}
	f.Fuzz(func(t *testing.T, body string, path int) {
		serveOne(t, s, http.MethodPost, paths[uint(path)%3], "application/json", []byte(body))
	})
}

func FuzzUpdateJSON(f *testing.F) {
	s := fuzzServer(f)
	for _, seed := range []string{`{"id":[1,2],"lat":[1,2],"lon":[3,4]}`, `{"id":"7","lat":1,"lon":2}`,
		`{"id":["a"],"lat":[1],"lon":[2],"replace":true}`, `{"lat":[1],"lon":[2],"replace":true}`, `{"id":[1,1],"lat":[1,1],"lon":[1,1]}`,
		`{"id":[true],"lat":[1],"lon":[1]}`, `{"lat":[],"lon":[],"replace":true}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		serveOne(t, s, http.MethodPost, "/v1/references", "application/json", []byte(body))
	})
}

func FuzzQueryArrow(f *testing.F) {
	s := fuzzServer(f)
	good := arrowBody(f, []float64{1, 2, 3}, []float64{4, 5, 6}, nil)
	withIDs := arrowBody(f, []float64{1}, []float64{2}, []string{"3"})
	f.Add(good, "/v1/nearest")
	f.Add(good, "/v1/knearest?k=2")
	f.Add(good, "/v1/within?radius_m=1e6&list=1")
	f.Add(withIDs, "/v1/references")
	f.Add(withIDs, "/v1/references?replace=true")
	f.Add(good[:len(good)/2], "/v1/nearest")
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, "/v1/nearest")
	f.Fuzz(func(t *testing.T, body []byte, target string) {
		if u, err := url.ParseRequestURI(target); err != nil || !strings.HasPrefix(u.Path, "/v1/") {
			return // not a request the HTTP server would pass on
		}
		serveOne(t, s, http.MethodPost, target, arrowStreamType, body)
	})
}

// FuzzFastQuery: where the fast parser takes a body, encoding/json reads
// the same values from it.
func FuzzFastQuery(f *testing.F) {
	for _, seed := range []string{`{"lat":1,"lon":2}`, ` {"lat" : [1.5e3, -2], "lon":[3,4],"k":3,"max_m":1e5} `,
		`{"lat":1,"lon":2,"radius_m":10,"list":true}`, `{"lat":[],"lon":[]}`, `{"lat":1,"lat":2,"lon":3}`, `{"lat":01,"lon":2}`,
		`{"lat":1,"lon":2,"k":1.5}`, `{"lat":-0.0,"lon":2E-3}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		fast, ok := fastQuery([]byte(body))
		if !ok {
			return
		}
		var slow jsonQuery
		if err := decodeJSON(strings.NewReader(body), &slow); err != nil {
			t.Fatalf("fast took %q, encoding/json refused it: %v", body, err)
		}
		same := func(a, b numbers) bool {
			if a.scalar != b.scalar || len(a.v) != len(b.v) {
				return false
			}
			for i := range a.v {
				if a.v[i] != b.v[i] {
					return false
				}
			}
			return true
		}
		eqp := func(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
		eqk := (fast.K == nil) == (slow.K == nil) && (fast.K == nil || *fast.K == *slow.K)
		if !same(fast.Lat, slow.Lat) || !same(fast.Lon, slow.Lon) || !eqk || !eqp(fast.MaxM, slow.MaxM) ||
			!eqp(fast.RadiusM, slow.RadiusM) || fast.List != slow.List {
			t.Fatalf("%q: fast %+v, encoding/json %+v", body, fast, slow)
		}
	})
}
