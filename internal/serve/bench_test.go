package serve

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"testing"
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
