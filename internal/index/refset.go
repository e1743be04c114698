package index

import (
	"math"
	"sync/atomic"

	"github.com/geoknn/geoknn/internal/parallel"
)

// RefSet is the prepared reference set shared by the engines: exact
// duplicates merged (the lowest index stands for all, which is the tie rule),
// unit vectors in float64 and float32.
type RefSet struct {
	N     int       // distinct references
	X, Y  []float64 // float64 unit vectors, SoA
	Z     []float64
	Xyz64 []float64 // float64 unit vectors interleaved (x, y, z), for the GPU
	Xyzw  []float32 // float32 unit vectors as float4 (x, y, z, 0), for the GPU
	Orig  []uint32  // orig[k] = input index of distinct reference k
	Dups  bool      // whether any duplicate was merged (orig is not the identity)
	Box   bbox      // the unit vectors' bounding box, found with them (fittedCube)

	// Scratch kept for the next prepare (a session prepares every query).
	Ux, Uy, Uz, cx, cy, cz []float64
	hash                   []uint64
	dup                    []bool
	tables                 [][]int32
}

func PrepareRefs(ref Points) *RefSet {
	s := &RefSet{}
	s.Prepare(ref)
	return s
}

// PrepareRefsAll prepares ref keeping exact duplicates as references of
// their own: the k nearest and the references within a radius list every
// one of them, ties to the lower index.
func PrepareRefsAll(ref Points) *RefSet {
	s := &RefSet{}
	s.unitVectors(ref, nil)
	s.X, s.Y, s.Z, s.N = s.Ux, s.Uy, s.Uz, len(s.Ux)
	s.Orig = make([]uint32, s.N)
	for i := range s.Orig {
		s.Orig[i] = uint32(i)
	}
	s.Interleave(nil)
	return s
}

// Grow returns b resized to n, reusing its memory when it is large enough.
func Grow[T any](b []T, n int) []T {
	if cap(b) >= n {
		return b[:n]
	}
	return make([]T, n)
}

// Prepare fills s from ref, reusing s's memory: unit vectors, exact
// duplicates merged, the interleaved forms the GPU reads. About a
// millisecond for 2^16 references, per query and per simulation step.
func (s *RefSet) Prepare(ref Points) {
	s.PrepareCPU(ref, nil)
	s.Interleave(nil)
}

// PrepareCPU is prepare on team's workers without the GPU's interleaved
// forms: what the CPU engine reads.
func (s *RefSet) PrepareCPU(ref Points, team *parallel.Team) {
	s.unitVectors(ref, team)
	s.markDuplicates(team)
	s.keepDistinct(team)
}

// unitVectorsBlock is the references unitVectors takes at a time.
const unitVectorsBlock = 1 << 11

// unitVectors fills ux, uy, uz, their hashes and their bounding box, in
// parallel (the sincos dominates).
func (s *RefSet) unitVectors(ref Points, team *parallel.Team) {
	n := ref.Len()
	ux, uy, uz := Grow(s.Ux, n), Grow(s.Uy, n), Grow(s.Uz, n)
	hash := Grow(s.hash, n)
	s.Ux, s.Uy, s.Uz, s.hash = ux, uy, uz, hash
	boxes := make([]bbox, (n+unitVectorsBlock-1)/unitVectorsBlock)
	team.Blocks(n, unitVectorsBlock, func(_, lo, hi int) {
		var u [12]float64
		box := EmptyBox()
		for i := lo; i < hi; i++ {
			e := (i - lo) % 4
			if e == 0 {
				UnitsFrom(ref, i, min(4, hi-i), &u)
			}
			x, y, z := u[e], u[4+e], u[8+e]
			ux[i], uy[i], uz[i] = x, y, z
			box.Add(x, y, z)
			// +0 turns -0 into +0: equal as map keys, so hashed alike.
			bx, by, bz := math.Float64bits(x+0), math.Float64bits(y+0), math.Float64bits(z+0)
			h := bx*0x9e3779b97f4a7c15 ^ by*0xc2b2ae3d27d4eb4f ^ bz*0x165667b19e3779f9
			hash[i] = h ^ h>>29
		}
		boxes[lo/unitVectorsBlock] = box
	})
	s.Box = EmptyBox()
	for _, b := range boxes {
		s.Box.join(&b)
	}
}

// bbox is a bounding box: its lower corner, then its upper.
type bbox [2][3]float64

// EmptyBox is the bounding box of no point, which any point widens.
func EmptyBox() bbox {
	inf := math.Inf(1)
	return bbox{{inf, inf, inf}, {-inf, -inf, -inf}}
}

// Add widens b to hold (x, y, z).
func (b *bbox) Add(x, y, z float64) {
	for a, v := range [3]float64{x, y, z} {
		b[0][a], b[1][a] = min(b[0][a], v), max(b[1][a], v)
	}
}

// join widens b to hold c.
func (b *bbox) join(c *bbox) {
	for a := range 3 {
		b[0][a], b[1][a] = min(b[0][a], c[0][a]), max(b[1][a], c[1][a])
	}
}

// UnitsFrom writes into u (x, then y, then z) the unit vectors of the n
// (at most 4) points of p from i, padded with (0, 0), four at a time
// through unit4 when their angles lie within the checked ranges, as unit
// gives them.
func UnitsFrom(p Points, i, n int, u *[12]float64) {
	var lat, lon [4]float64
	if p.Lat64 != nil && n == 4 {
		lat, lon = [4]float64(p.Lat64[i:i+4]), [4]float64(p.Lon64[i:i+4])
	} else {
		for k := range n {
			lat[k], lon[k] = p.At(i + k)
		}
	}
	inRange := true
	for k := range 4 {
		inRange = inRange && math.Abs(lat[k]) <= 2*math.Pi && math.Abs(lon[k]) <= 2*math.Pi
	}
	if inRange {
		Unit4(&lat, &lon, u)
		return
	}
	Unit4Go(&lat, &lon, u)
}

// markDuplicates sets dup[i] for every vector equal to an earlier one, and
// dups when there is any. The hash's low bits split the vectors into
// partitions (equal vectors share one), searched in parallel, each through
// an open-addressing table filled in index order, which keeps the first of
// equal vectors.
func (s *RefSet) markDuplicates(team *parallel.Team) {
	n := len(s.hash)
	parts := 1
	for parts < parallel.Workers(n, 1<<12, team.Workers()) {
		parts <<= 1
	}
	s.dup = Grow(s.dup, n)
	clear(s.dup)
	if len(s.tables) < parts {
		s.tables = append(s.tables, make([][]int32, parts-len(s.tables))...)
	}
	var anyDup atomic.Bool
	team.Blocks(parts, 1, func(_, part, _ int) {
		if s.markPartition(part, parts) {
			anyDup.Store(true)
		}
	})
	s.Dups = anyDup.Load()
}

// markPartition marks the duplicates among the vectors whose hash falls in
// partition part of parts, and reports whether it found any.
func (s *RefSet) markPartition(part, parts int) bool {
	count := 0 // the table is sized from this partition's own count: it never fills
	for _, h := range s.hash {
		if int(h)&(parts-1) == part {
			count++
		}
	}
	size := 16
	for size < 2*count {
		size <<= 1
	}
	table := Grow(s.tables[part], size) // 0 empty, else index + 1
	clear(table)
	s.tables[part] = table
	found := false
	for i, h := range s.hash {
		if int(h)&(parts-1) != part {
			continue
		}
		slot, dup := s.probe(table, int(h>>32)&(size-1), i)
		s.dup[i] = dup
		found = found || dup
		if !dup {
			table[slot] = int32(i + 1)
		}
	}
	return found
}

// probe walks table from slot until an empty slot (returned, dup false) or
// a vector equal to vector i (dup true).
func (s *RefSet) probe(table []int32, slot, i int) (int, bool) {
	for table[slot] != 0 {
		k := table[slot] - 1
		if s.Ux[k] == s.Ux[i] && s.Uy[k] == s.Uy[i] && s.Uz[k] == s.Uz[i] {
			return slot, true
		}
		slot = (slot + 1) & (len(table) - 1)
	}
	return slot, false
}

// keepDistinct sets x, y, z to the distinct vectors and orig to their input
// indices.
func (s *RefSet) keepDistinct(team *parallel.Team) {
	n := len(s.Ux)
	if !s.Dups {
		s.X, s.Y, s.Z = s.Ux, s.Uy, s.Uz
		orig := Grow(s.Orig, n)
		team.Blocks(n, DistinctBlock, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				orig[i] = uint32(i)
			}
		})
		s.Orig, s.N = orig, n
		return
	}
	// Each block counts its distinct vectors, then writes them after the
	// blocks before: the input order kept.
	first := make([]int, (n+DistinctBlock-1)/DistinctBlock+1)
	team.Blocks(n, DistinctBlock, func(_, lo, hi int) {
		kept := 0
		for i := lo; i < hi; i++ {
			if !s.dup[i] {
				kept++
			}
		}
		first[lo/DistinctBlock+1] = kept
	})
	for b := 1; b < len(first); b++ {
		first[b] += first[b-1]
	}
	m := first[len(first)-1]
	orig := Grow(s.Orig, m)
	x, y, z := Grow(s.cx, m), Grow(s.cy, m), Grow(s.cz, m)
	team.Blocks(n, DistinctBlock, func(_, lo, hi int) {
		k := first[lo/DistinctBlock]
		for i := lo; i < hi; i++ {
			if !s.dup[i] {
				orig[k], x[k], y[k], z[k] = uint32(i), s.Ux[i], s.Uy[i], s.Uz[i]
				k++
			}
		}
	})
	s.Orig, s.cx, s.cy, s.cz = orig, x, y, z
	s.X, s.Y, s.Z, s.N = x, y, z, m
}

// DistinctBlock is the references keepDistinct takes at a time.
const DistinctBlock = 1 << 13

// Interleave writes the distinct vectors as (x, y, z) float64 triples and
// (x, y, z, 0) float32 quadruples, as the GPU kernels read them.
func (s *RefSet) Interleave(team *parallel.Team) {
	s.Xyz64, s.Xyzw = Grow(s.Xyz64, 3*s.N), Grow(s.Xyzw, 4*s.N)
	team.Blocks(s.N, 1<<13, func(_, lo, hi int) {
		for k := lo; k < hi; k++ {
			s.Xyz64[3*k], s.Xyz64[3*k+1], s.Xyz64[3*k+2] = s.X[k], s.Y[k], s.Z[k]
			s.Xyzw[4*k], s.Xyzw[4*k+1], s.Xyzw[4*k+2], s.Xyzw[4*k+3] = float32(s.X[k]), float32(s.Y[k]), float32(s.Z[k]), 0
		}
	})
}
