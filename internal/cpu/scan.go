package cpu

import (
	"math"

	"github.com/geoknn/geoknn/internal/index"
)

// cpuScratch is one goroutine's working set for a batch of observations.
type cpuScratch struct {
	x, y, z     []float64
	best, runup []float64 // largest and second-largest dot product
	idx         []int32
}

func newCPUScratch(batch int) *cpuScratch {
	return &cpuScratch{
		x: make([]float64, batch), y: make([]float64, batch), z: make([]float64, batch),
		best: make([]float64, batch), runup: make([]float64, batch), idx: make([]int32, batch),
	}
}

// dotMargin bounds, in dot-product units, how far the float64 dot product can
// rank two references differently from the squared chord computed as a sum
// of squared differences (chord2): the unit vectors' norms differ from 1 by
// up to 2^-52 and each dot product carries up to 3 roundings near 1. A
// winner whose lead is not larger is re-ranked with chord2.
const dotMargin = 4e-15

// scan finds the nearest distinct reference of observations [lo, hi) and
// leaves its squared chord in s.best and its distinct-reference index in
// s.idx. The hot loop ranks by dot product (5 flops a pair instead of 8);
// observations whose winner leads the runner-up by less than dotMargin are
// re-ranked by chord2, so the answer is exactly chord2's, ties to the lowest
// index, as on the GPU.
func (s *cpuScratch) scan(obs index.Points, lo, hi int, refs *index.RefSet) {
	m := hi - lo
	for i := 0; i < m; i++ {
		s.x[i], s.y[i], s.z[i] = index.Unit(obs.At(lo + i))
		s.best[i], s.runup[i] = math.Inf(-1), math.Inf(-1)
		s.idx[i] = 0
	}
	for t0 := 0; t0 < refs.N; t0 += cpuRefTile {
		t1 := min(t0+cpuRefTile, refs.N)
		t := refTile{x: refs.X[t0:t1], y: refs.Y[t0:t1], z: refs.Z[t0:t1], base: int32(t0)}
		i := 0
		for ; i+3 <= m; i += 3 {
			scan3(s, i, t)
		}
		for ; i < m; i++ {
			scan1(s, i, t)
		}
	}
	for i := 0; i < m; i++ {
		if s.best[i]-s.runup[i] <= dotMargin {
			s.best[i], s.idx[i] = exactNearest(s.x[i], s.y[i], s.z[i], refs)
			continue
		}
		k := s.idx[i]
		s.best[i] = index.Chord2(s.x[i], s.y[i], s.z[i], refs.X[k], refs.Y[k], refs.Z[k])
	}
}

// exactNearest ranks every reference by chord2; strict < keeps the lowest
// index on ties.
func exactNearest(ox, oy, oz float64, refs *index.RefSet) (float64, int32) {
	best, bi := math.Inf(1), int32(0)
	for j := range refs.X {
		if d := index.Chord2(ox, oy, oz, refs.X[j], refs.Y[j], refs.Z[j]); d < best {
			best, bi = d, int32(j)
		}
	}
	return best, bi
}

// scan3Generic updates observations i, i+1, i+2 against a tile of references, keeping
// the largest and second-largest dot product. Three independent chains keep
// the floating-point units busy while everything stays in amd64's 16 vector
// registers (four spill and run 25% slower); the rarely taken branch costs
// one compare a pair.
func scan3Generic(s *cpuScratch, i int, t refTile) {
	ox, oy, oz, best, runup, idx := s.x[i:i+3], s.y[i:i+3], s.z[i:i+3], s.best[i:i+3], s.runup[i:i+3], s.idx[i:i+3]
	rx, ry, rz, base := t.x, t.y, t.z, t.base
	_, _, _, _, _, _ = ox[2], oy[2], oz[2], best[2], runup[2], idx[2]
	x0, x1, x2 := ox[0], ox[1], ox[2]
	y0, y1, y2 := oy[0], oy[1], oy[2]
	z0, z1, z2 := oz[0], oz[1], oz[2]
	b0, b1, b2 := best[0], best[1], best[2]
	s0, s1, s2 := runup[0], runup[1], runup[2]
	i0, i1, i2 := idx[0], idx[1], idx[2]
	ry, rz = ry[:len(rx)], rz[:len(rx)]
	for j, x := range rx {
		y, z := ry[j], rz[j]
		if d := x0*x + y0*y + z0*z; d > s0 {
			if d > b0 {
				s0, b0, i0 = b0, d, base+int32(j)
			} else {
				s0 = d
			}
		}
		if d := x1*x + y1*y + z1*z; d > s1 {
			if d > b1 {
				s1, b1, i1 = b1, d, base+int32(j)
			} else {
				s1 = d
			}
		}
		if d := x2*x + y2*y + z2*z; d > s2 {
			if d > b2 {
				s2, b2, i2 = b2, d, base+int32(j)
			} else {
				s2 = d
			}
		}
	}
	best[0], best[1], best[2] = b0, b1, b2
	runup[0], runup[1], runup[2] = s0, s1, s2
	idx[0], idx[1], idx[2] = i0, i1, i2
}

// scan1 is scan3Generic for one observation, i.
func scan1(s *cpuScratch, i int, t refTile) {
	ox, oy, oz := s.x[i], s.y[i], s.z[i]
	b, r, bi := s.best[i], s.runup[i], s.idx[i]
	rx, ry, rz := t.x, t.y[:len(t.x)], t.z[:len(t.x)]
	for j, x := range rx {
		if d := ox*x + oy*ry[j] + oz*rz[j]; d > r {
			if d > b {
				r, b, bi = b, d, t.base+int32(j)
			} else {
				r = d
			}
		}
	}
	s.best[i], s.runup[i], s.idx[i] = b, r, bi
}

// refTile is a tile of distinct references as float64 unit-vector
// columns; base is the index of its first.
type refTile struct {
	x, y, z []float64
	base    int32
}
