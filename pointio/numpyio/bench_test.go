package numpyio

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/geoknn/geoknn/stream"
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

// benchAnswers is n nearest answers to write: references and distances
// as a query would give them.
func benchAnswers(n int) (ref []uint32, metres []float64) {
	r := rand.New(rand.NewPCG(9, 10))
	ref, metres = make([]uint32, n), make([]float64, n)
	for i := range n {
		ref[i], metres[i] = r.Uint32N(1<<20), r.Float64()*2e7
	}
	return ref, metres
}

// Streamed nearest answers written in place to a file, as knn run writes
// an .npz output.
func BenchmarkNPZAnswerWriterAt(b *testing.B) {
	const n, chunk = 1 << 24, 1 << 22
	ref, metres := benchAnswers(n)
	dir := b.TempDir()
	path := filepath.Join(dir, "bench.npz")
	b.SetBytes(int64(n) * 12)
	for b.Loop() {
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		w, err := NewNPZAnswerWriterAt(f, stream.KindNearest, 1, n, dir)
		for lo := 0; lo < n && err == nil; lo += chunk {
			err = w.Write(stream.Answers{Base: lo, N: chunk, Nearest: func(i int) (uint32, float64) { return ref[lo+i], metres[lo+i] }})
		}
		if err == nil {
			err = w.Close()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

// A .npy file read in chunks, as knn run reads --obs in.npy.
func BenchmarkNPYFileChunks(b *testing.B) {
	const rows, chunk = 1 << 24, 1 << 23
	r := rand.New(rand.NewPCG(7, 8))
	vals := make([]float64, 2*rows)
	for i := range rows {
		vals[2*i], vals[2*i+1] = r.Float64()*180-90, r.Float64()*360-180
	}
	path := filepath.Join(b.TempDir(), "bench.npy")
	if err := os.WriteFile(path, npyBytes("<f8", fmt.Sprintf("(%d, 2)", rows), false, vals), 0o644); err != nil {
		b.Fatal(err)
	}
	vals = nil
	b.SetBytes(rows * 16)
	var dst stream.Chunk
	for b.Loop() {
		c, err := OpenNPYFile(path, false, chunk)
		if err != nil {
			b.Fatal(err)
		}
		got := 0
		for err == nil {
			if dst, err = c.Next(context.Background(), dst); err == nil {
				got += len(dst.Lat)
			}
		}
		c.Close()
		if err != io.EOF || got != rows {
			b.Fatal(got, err)
		}
	}
}

// Rows of little-endian float64 decoded in line, and through the general
// decoder's call a value.
func BenchmarkNPYDecodeRows(b *testing.B) {
	const rows = 1 << 15
	var block []byte
	for _, v := range npyTestRows(rows) {
		block = binary.LittleEndian.AppendUint64(block, math.Float64bits(v))
	}
	vals, err := npyMeta{descr: "<f8", shape: []int{rows, 2}}.values()
	if err != nil {
		b.Fatal(err)
	}
	lat, lon := make([]float64, rows), make([]float64, rows)
	for _, le64 := range []bool{true, false} {
		vals.le64 = le64
		b.Run(fmt.Sprintf("le64=%v", le64), func(b *testing.B) {
			b.SetBytes(int64(len(block)))
			for b.Loop() {
				if bad := vals.decodeRows(block, lat, lon, newNPYRule(false)); bad >= 0 {
					b.Fatal(bad)
				}
			}
		})
	}
}
