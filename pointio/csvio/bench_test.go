package pointio

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
		pts, err := ReadCSV(bytes.NewReader(data), "bench.csv")
		if err != nil || len(pts) != rows {
			b.Fatal(len(pts), err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

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
		pts, err := ReadGeoJSON(bytes.NewReader(data), "bench.geojson")
		if err != nil || len(pts) != rows {
			b.Fatal(len(pts), err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "points/s")
}

func BenchmarkReadFileCities(b *testing.B) {
	path, _ := realData(b, "cities.csv")
	for b.Loop() {
		if _, err := ReadFile(path); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteResults(b *testing.B) {
	const rows = 1 << 20
	r := rand.New(rand.NewPCG(7, 8))
	metres := make([]float64, rows)
	for i := range metres {
		metres[i] = r.Float64() * 2e7
	}
	w := bufio.NewWriterSize(io.Discard, writeBufferSize)
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
		pts, err := readNPY(bytes.NewReader(data), "bench.npy", int64(len(data)), false)
		if err != nil || len(pts) != rows {
			b.Fatal(len(pts), err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
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
		pts, err := ReadCSV(bytes.NewReader(data), "bench.csv")
		if err != nil || len(pts) != rows {
			b.Fatal(len(pts), err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
