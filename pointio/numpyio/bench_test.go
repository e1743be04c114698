package numpyio

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

func BenchmarkReadNPY(b *testing.B) {
	const rows = 1 << 20
	r := rand.New(rand.NewPCG(7, 8))
	vals := make([]float64, 2*rows)
	for i := range rows {
		vals[2*i], vals[2*i+1] = r.Float64()*180-90, r.Float64()*360-180
	}
	data := npyBytes("<f8", fmt.Sprintf("(%d, 2)", rows), false, vals)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		pts, err := ReadNPY(bytes.NewReader(data), "bench.npy", int64(len(data)), false)
		if err != nil || len(pts) != rows {
			b.Fatal(len(pts), err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
