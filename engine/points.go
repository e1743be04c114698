package engine

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/geoknn/geoknn/internal/parallel"
)

// Points is a set of points as latitude and longitude columns in radians.
// Exactly one precision is set: Lat64/Lon64 or Lat32/Lon32. The engines read
// the columns in place and never modify them.
type Points struct {
	Lat64, Lon64 []float64
	Lat32, Lon32 []float32
}

// Radians64 wraps float64 radian columns.
func Radians64(lat, lon []float64) Points { return Points{Lat64: lat, Lon64: lon} }

// Radians32 wraps float32 radian columns.
func Radians32(lat, lon []float32) Points { return Points{Lat32: lat, Lon32: lon} }

// Len is the number of points.
func (p Points) Len() int {
	if p.Lat64 != nil {
		return len(p.Lat64)
	}
	return len(p.Lat32)
}

// Is32 reports whether the columns are float32.
func (p Points) Is32() bool { return p.Lat64 == nil && p.Lat32 != nil }

// At returns point i in radians.
func (p Points) At(i int) (lat, lon float64) {
	if p.Lat64 != nil {
		return p.Lat64[i], p.Lon64[i]
	}
	return float64(p.Lat32[i]), float64(p.Lon32[i])
}

// Slice returns points [from, to).
func (p Points) Slice(from, to int) Points {
	if p.Lat64 != nil {
		return Points{Lat64: p.Lat64[from:to], Lon64: p.Lon64[from:to]}
	}
	return Points{Lat32: p.Lat32[from:to], Lon32: p.Lon32[from:to]}
}

// Check verifies that the columns are consistent and every point is a valid
// latitude/longitude; what names the set in errors ("observations").
func (p Points) Check(what string) error {
	if (p.Lat64 == nil) == (p.Lat32 == nil) && (len(p.Lat64) > 0 || len(p.Lat32) > 0) {
		return fmt.Errorf("%s: set either float64 or float32 columns, not both", what)
	}
	if len(p.Lat64) != len(p.Lon64) || len(p.Lat32) != len(p.Lon32) {
		return fmt.Errorf("%s: latitude and longitude columns differ in length", what)
	}
	// Degrees converted to radians round: float32(pi/2) is 4.4e-8 above
	// pi/2, so the bounds allow the rounding of the columns' precision.
	slack := 1e-12
	if p.Is32() {
		slack = 1e-6
	}
	// Checked in parallel: a query of 2^27 points would otherwise spend a
	// noticeable part of a GPU run here.
	var mu sync.Mutex
	first := -1
	parallelFor(p.Len(), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if lat, lon := p.At(i); !validRadians(lat, lon, slack) {
				mu.Lock()
				if first < 0 || i < first {
					first = i
				}
				mu.Unlock()
				return
			}
		}
	})
	if first >= 0 {
		lat, lon := p.At(first)
		if !(lat >= -math.Pi/2-slack && lat <= math.Pi/2+slack) {
			return fmt.Errorf("%s: point %d: latitude %v rad is not in [-pi/2, pi/2]", what, first, lat)
		}
		return fmt.Errorf("%s: point %d: longitude %v rad is not in [-pi, pi]", what, first, lon)
	}
	return nil
}

func validRadians(lat, lon, slack float64) bool {
	return lat >= -math.Pi/2-slack && lat <= math.Pi/2+slack && lon >= -math.Pi-slack && lon <= math.Pi+slack
}

// unit returns the float64 unit vector of (lat, lon) radians.
func unit(lat, lon float64) (x, y, z float64) {
	sl, cl := math.Sincos(lat)
	sn, cn := math.Sincos(lon)
	return cl * cn, cl * sn, sl
}

// chord2 is the squared chord between two unit vectors. The explicit
// float64 conversions forbid fused multiply-adds, so the value is the same on
// every architecture and equals the GPU's refine kernel (haversine.cu chord2d).
func chord2(ax, ay, az, bx, by, bz float64) float64 {
	dx, dy, dz := ax-bx, ay-by, az-bz
	return float64(float64(dx*dx)+float64(dy*dy)) + float64(dz*dz)
}

// ChordToAngle converts a squared chord between unit vectors to the
// great-circle angle in radians: 2 asin(c/2).
func ChordToAngle(d2 float64) float64 {
	h := math.Sqrt(d2) / 2
	if h > 1 {
		h = 1
	}
	return 2 * math.Asin(h)
}

// refSet is the prepared reference set shared by the engines: exact
// duplicates merged (the lowest index stands for all, which is the tie rule),
// unit vectors in float64 and float32.
type refSet struct {
	n     int       // distinct references
	x, y  []float64 // float64 unit vectors, SoA
	z     []float64
	xyz64 []float64 // float64 unit vectors interleaved (x, y, z), for the GPU
	xyzw  []float32 // float32 unit vectors as float4 (x, y, z, 0), for the GPU
	orig  []uint32  // orig[k] = input index of distinct reference k
	dups  bool      // whether any duplicate was merged (orig is not the identity)

	// Scratch kept for the next prepare (a session prepares every query).
	ux, uy, uz, cx, cy, cz []float64
	hash                   []uint64
	dup                    []bool
	tables                 [][]int32
}

func prepareRefs(ref Points) *refSet {
	s := &refSet{}
	s.prepare(ref)
	return s
}

// grow returns b resized to n, reusing its memory when it is large enough.
func grow[T any](b []T, n int) []T {
	if cap(b) >= n {
		return b[:n]
	}
	return make([]T, n)
}

// prepare fills s from ref, reusing s's memory.
func (s *refSet) prepare(ref Points) {
	n := ref.Len()
	// Unit vectors and their hashes in parallel (the sincos dominates), then
	// exact duplicates found in parallel too: the hash's low bits split the
	// vectors into partitions (equal vectors share one), and each
	// partition's open-addressing table, filled in index order, keeps the
	// first of equal vectors. About a millisecond for 2^16 references, per
	// query and per simulation step.
	ux, uy, uz := grow(s.ux, n), grow(s.uy, n), grow(s.uz, n)
	hash := grow(s.hash, n)
	s.ux, s.uy, s.uz, s.hash = ux, uy, uz, hash
	parallel.Blocks(n, 1<<11, 0, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			x, y, z := unit(ref.At(i))
			ux[i], uy[i], uz[i] = x, y, z
			// +0 turns -0 into +0: equal as map keys, so hashed alike.
			bx, by, bz := math.Float64bits(x+0), math.Float64bits(y+0), math.Float64bits(z+0)
			h := bx*0x9e3779b97f4a7c15 ^ by*0xc2b2ae3d27d4eb4f ^ bz*0x165667b19e3779f9
			hash[i] = h ^ h>>29
		}
	})
	parts := 1
	for parts < parallel.Workers(n, 1<<12, 0) {
		parts <<= 1
	}
	dup := grow(s.dup, n)
	clear(dup)
	s.dup = dup
	if len(s.tables) < parts {
		s.tables = append(s.tables, make([][]int32, parts-len(s.tables))...)
	}
	var anyDup atomic.Bool
	parallel.Blocks(parts, 1, parts, func(_, part, _ int) {
		count := 0 // sized from this partition's own count: a table never fills
		for _, h := range hash {
			if int(h)&(parts-1) == part {
				count++
			}
		}
		size := 16
		for size < 2*count {
			size <<= 1
		}
		table := grow(s.tables[part], size) // 0 empty, else index + 1
		clear(table)
		s.tables[part] = table
		for i, h := range hash {
			if int(h)&(parts-1) != part {
				continue
			}
			slot := int(h>>32) & (size - 1)
			for table[slot] != 0 {
				k := table[slot] - 1
				if ux[k] == ux[i] && uy[k] == uy[i] && uz[k] == uz[i] {
					dup[i] = true
					anyDup.Store(true)
					break
				}
				slot = (slot + 1) & (size - 1)
			}
			if !dup[i] {
				table[slot] = int32(i + 1)
			}
		}
	})
	s.dups = anyDup.Load()
	s.orig = grow(s.orig, n)[:0]
	if !s.dups {
		s.x, s.y, s.z = ux, uy, uz
		s.orig = s.orig[:n]
		for i := range s.orig {
			s.orig[i] = uint32(i)
		}
	} else {
		for i := range n {
			if !dup[i] {
				s.orig = append(s.orig, uint32(i))
			}
		}
		m := len(s.orig)
		s.cx, s.cy, s.cz = grow(s.cx, m), grow(s.cy, m), grow(s.cz, m)
		s.x, s.y, s.z = s.cx, s.cy, s.cz
		for k, i := range s.orig {
			s.x[k], s.y[k], s.z[k] = ux[i], uy[i], uz[i]
		}
	}
	s.n = len(s.orig)
	s.xyz64, s.xyzw = grow(s.xyz64, 3*s.n), grow(s.xyzw, 4*s.n)
	parallel.Blocks(s.n, 1<<13, 0, func(_, lo, hi int) {
		for k := lo; k < hi; k++ {
			s.xyz64[3*k], s.xyz64[3*k+1], s.xyz64[3*k+2] = s.x[k], s.y[k], s.z[k]
			s.xyzw[4*k], s.xyzw[4*k+1], s.xyzw[4*k+2], s.xyzw[4*k+3] = float32(s.x[k]), float32(s.y[k]), float32(s.z[k]), 0
		}
	})
}
