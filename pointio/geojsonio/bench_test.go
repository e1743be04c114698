package geojsonio

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

func BenchmarkReadGeoJSON(b *testing.B) {
	const rows = 100_000
	r := rand.New(rand.NewPCG(5, 6))
	var buf bytes.Buffer
	buf.WriteString(`{"type":"FeatureCollection","features":[`)
	for i := range rows {
		if i > 0 {
			buf.WriteByte(',')
		}
		fmt.Fprintf(&buf, `{"type":"Feature","properties":{"name":"p%d"},"geometry":{"type":"Point","coordinates":[%.5f,%.5f]}}`,
			i, r.Float64()*360-180, r.Float64()*180-90)
	}
	buf.WriteString("]}")
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		pts, err := Read(bytes.NewReader(data), "bench.geojson")
		if err != nil || len(pts) != rows {
			b.Fatal(len(pts), err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "points/s")
}
