package mpi

import "unsafe"

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

// BcastRadians sends root's radian columns (latitudes and longitudes,
// float64, of equal length) to every process; the other processes' lat
// and lon are ignored. Root gets its own columns back; the others get
// new ones.
func (c Comm) BcastRadians(lat, lon []float64, root int) (outLat, outLon []float64, err error) {
	me, err := c.Rank()
	if err != nil {
		return nil, nil, err
	}
	n := []int64{int64(len(lat))}
	if err := c.Bcast(Bytes(n), root); err != nil {
		return nil, nil, err
	}
	if me != root {
		lat, lon = make([]float64, n[0]), make([]float64, n[0])
	}
	for _, col := range [][]float64{lat, lon} {
		if err := c.Bcast(Bytes(col), root); err != nil {
			return nil, nil, err
		}
	}
	return lat, lon, nil
}

// ScatterRadians sends each process its range (counts, as Shares gives) of
// root's radian columns; the other processes' lat and lon are ignored.
func (c Comm) ScatterRadians(lat, lon []float64, counts []int, root int) (outLat, outLon []float64, err error) {
	me, err := c.Rank()
	if err != nil {
		return nil, nil, err
	}
	bytes := make([]int, len(counts))
	for r, k := range counts {
		bytes[r] = 8 * k
	}
	if me != root {
		lat, lon = nil, nil
	}
	outLat, outLon = make([]float64, counts[me]), make([]float64, counts[me])
	if err := c.Scatterv(Bytes(lat), bytes, Bytes(outLat), root); err != nil {
		return nil, nil, err
	}
	if err := c.Scatterv(Bytes(lon), bytes, Bytes(outLon), root); err != nil {
		return nil, nil, err
	}
	return outLat, outLon, nil
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
