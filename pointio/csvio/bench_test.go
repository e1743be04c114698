package csvio

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"testing"
)

// syntheticCSV returns n rows shaped like the shared cities data set:
// lat, lon, population and a quoted name.
func syntheticCSV(n int) []byte {
	r := rand.New(rand.NewPCG(3, 4))
	var b bytes.Buffer
	b.WriteString("lat,lon,population,name\n")
	for i := range n {
		fmt.Fprintf(&b, "%.5f,%.5f,%d,\"Place %d, \"\"Region\"\"\"\n",
			r.Float64()*180-90, r.Float64()*360-180, r.IntN(1e7), i)
	}
	return b.Bytes()
}

func BenchmarkReadCSV(b *testing.B) {
	const rows = 100_000
	data := syntheticCSV(rows)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		pts, err := Read(bytes.NewReader(data), "bench.csv")
		if err != nil || len(pts) != rows {
			b.Fatal(len(pts), err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkWriteResults(b *testing.B) {
	const rows = 1 << 20
	r := rand.New(rand.NewPCG(7, 8))
	metres := make([]float64, rows)
	for i := range metres {
		metres[i] = r.Float64() * 2e7
	}
	w := bufio.NewWriterSize(io.Discard, 256<<10)
	b.ReportAllocs()
	for b.Loop() {
		err := WriteResults(w, rows, func(i int) (uint32, float64) { return uint32(i * 7), metres[i] })
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(rows)/float64(b.N), "ns/row")
}

// BenchmarkFormatStrconv is the baseline for WriteResults' number
// formatting: strconv.AppendFloat with 'f' and 3 decimals.
func BenchmarkFormatStrconv(b *testing.B) {
	buf := make([]byte, 0, 32)
	m := 1234567.891234
	for b.Loop() {
		buf = strconv.AppendFloat(buf[:0], m, 'f', 3, 64)
	}
}

func BenchmarkFormatAppendMetres(b *testing.B) {
	buf := make([]byte, 0, 32)
	m := 1234567.891234
	for b.Loop() {
		buf = appendMetres(buf[:0], m)
	}
}

// BenchmarkReadCSVLatLon reads 2^20 rows of just "lat,lon", the shape
// of a points export, through ReadFile's path (chunks on every core).
func BenchmarkReadCSVLatLon(b *testing.B) {
	const rows = 1 << 20
	r := rand.New(rand.NewPCG(9, 10))
	var buf bytes.Buffer
	buf.WriteString("lat,lon\n")
	for range rows {
		fmt.Fprintf(&buf, "%.6f,%.6f\n", r.Float64()*180-90, r.Float64()*360-180)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		pts, err := Read(bytes.NewReader(data), "bench.csv")
		if err != nil || len(pts) != rows {
			b.Fatal(len(pts), err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
