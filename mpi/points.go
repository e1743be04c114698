package mpi

import (
	"unsafe"

	"github.com/geoknn/geoknn"
)

// Shares splits n observations into one contiguous range a process of c,
// as even as they go: counts[r] of them to rank r, in rank order.
func Shares(n, size int) []int {
	counts := make([]int, size)
	for r := range counts {
		counts[r] = n*(r+1)/size - n*r/size
	}
	return counts
}

// Range is rank r's range [lo, hi) of counts.
func Range(counts []int, r int) (lo, hi int) {
	lo = offset(counts, r)
	return lo, lo + counts[r]
}

// BcastPoints sends root's points to every process, as float64 radian
// columns (any form at root: columns of either precision, or a generated
// set); the other processes' p is ignored.
func (c Comm) BcastPoints(p geoknn.Points, root int) (geoknn.Points, error) {
	me, err := c.Rank()
	if err != nil {
		return geoknn.Points{}, err
	}
	n := []int64{int64(p.Len())}
	if err := c.Bcast(Bytes(n), root); err != nil {
		return geoknn.Points{}, err
	}
	var lat, lon []float64
	if me == root {
		lat, lon = float64Cols(p)
	} else {
		lat, lon = make([]float64, n[0]), make([]float64, n[0])
	}
	for _, col := range [][]float64{lat, lon} {
		if err := c.Bcast(Bytes(col), root); err != nil {
			return geoknn.Points{}, err
		}
	}
	return geoknn.Radians64(lat, lon), nil
}

// float64Cols is p as float64 radian columns: its own where it holds them,
// else a copy.
func float64Cols(p geoknn.Points) (lat, lon []float64) {
	if lat, lon = p.Float64(); lat != nil {
		return lat, lon
	}
	lat, lon = make([]float64, p.Len()), make([]float64, p.Len())
	for i := range lat {
		lat[i], lon[i] = p.At(i)
	}
	return lat, lon
}

// ScatterPoints sends each process its range (counts, as Shares gives) of
// root's points, as float64 radian columns.
func (c Comm) ScatterPoints(p geoknn.Points, counts []int, root int) (geoknn.Points, error) {
	me, err := c.Rank()
	if err != nil {
		return geoknn.Points{}, err
	}
	bytes := make([]int, len(counts))
	for r, k := range counts {
		bytes[r] = 8 * k
	}
	var srcLat, srcLon []float64
	if me == root {
		srcLat, srcLon = float64Cols(p)
	}
	lat, lon := make([]float64, counts[me]), make([]float64, counts[me])
	if err := c.Scatterv(Bytes(srcLat), bytes, Bytes(lat), root); err != nil {
		return geoknn.Points{}, err
	}
	if err := c.Scatterv(Bytes(srcLon), bytes, Bytes(lon), root); err != nil {
		return geoknn.Points{}, err
	}
	return geoknn.Radians64(lat, lon), nil
}

// Gather collects every process's rows at root: per values an observation,
// counts[r] observations from rank r, into all (root's, room for them all;
// nil elsewhere) in rank order. Root's own rows are copied in unless own
// already is their place in all (answered in place).
func Gather[T any](c Comm, own, all []T, counts []int, per, root, tag int) error {
	me, err := c.Rank()
	if err != nil {
		return err
	}
	if me != root {
		return c.Send(Bytes(own), root, tag)
	}
	for r := range counts {
		lo, hi := Range(counts, r)
		lo, hi = lo*per, hi*per
		if r == root {
			if len(own) > 0 && &own[0] != &all[lo] {
				copy(all[lo:hi], own)
			}
			continue
		}
		if err := c.Recv(Bytes(all[lo:hi]), r, tag); err != nil {
			return err
		}
	}
	return nil
}

// Bytes is s's memory as bytes (nil for an empty s), for the calls that
// move bytes.
func Bytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(zero)))
}
