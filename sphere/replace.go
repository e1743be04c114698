package sphere

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
)

// ReplaceBlockSize observations share one draw of which of them a
// replacement takes: it is part of the definition of every replacement.
const ReplaceBlockSize = 1 << 12

// streamReplace keys the slots a replacement takes; the fresh points use
// the generator's own stream under the step's seed.
const streamReplace = 0xbe5466cf34e90c6c

// Replacement draws which observations of a set are replaced at one step
// of a simulation, and by which fresh points, as a pure function of (Seed,
// Step, the observation's block): a GPU draws the same replacement where the
// observations live (internal/kernels/resident.cu is the twin), in any order
// and on any number of threads, and the CPU engine draws it here.
//
// Of n observations, exactly ReplaceCount(Fraction, n) are replaced: block
// b (observations [b*ReplaceBlockSize, ...)) replaces ReplaceCount of its
// end minus ReplaceCount of its start, a set drawn without repetition by
// Floyd's algorithm from Philox4x32-10, and the t-th replaced observation
// overall (in index order) becomes point t of the generator under seed
// PointSeed.
type Replacement struct {
	Fraction   float64
	Seed, Step uint64
	// Point is the generator of the fresh points (SphereAt or
	// SeedUniformAt; IndexedByName).
	Point Indexed
}

// ReplaceCount is how many of the first n observations a replacement of
// fraction frac takes: round(frac*n).
func ReplaceCount(frac float64, n int) int {
	return int(math.Round(float64(frac * float64(n))))
}

// CheckFraction reports a fraction outside [0, 1].
func CheckFraction(frac float64) error {
	if !(frac >= 0 && frac <= 1) {
		return fmt.Errorf("replacement fraction %v is not in [0, 1]", frac)
	}
	return nil
}

// SlotKey is the Philox key of the step's slot draws.
func (r Replacement) SlotKey() uint64 { return Mix64(r.Seed^streamReplace) ^ Mix64(r.Step) }

// PointSeed is the seed the step's fresh points are drawn with.
func (r Replacement) PointSeed() uint64 { return Mix64(r.SlotKey() + 0x9e3779b97f4a7c15) }

// Blocks is the number of blocks of n observations.
func Blocks(n int) int { return (n + ReplaceBlockSize - 1) / ReplaceBlockSize }

// BlockSlots returns block b's replaced observations of n, in increasing
// order, and the ordinal of the first of them among all replaced ones. set
// is scratch of ReplaceBlockSize/64 words; slots is appended to.
func (r Replacement) BlockSlots(b, n int, set []uint64, slots []uint32) (first int, _ []uint32) {
	lo, hi := b*ReplaceBlockSize, min((b+1)*ReplaceBlockSize, n)
	first, k := r.BlockRange(b, n)
	if k <= 0 {
		return first, slots
	}
	m := hi - lo
	set = set[:(m+63)/64]
	clear(set)
	key := r.SlotKey()
	for j := m - k; j < m; j++ {
		x := drawBelow(key, uint32(b), uint32(j), uint64(j+1))
		if set[x/64]&(1<<(x%64)) != 0 {
			x = uint64(j)
		}
		set[x/64] |= 1 << (x % 64)
	}
	for w, word := range set {
		for word != 0 {
			slots = append(slots, uint32(lo+64*w+bits.TrailingZeros64(word)))
			word &= word - 1
		}
	}
	return first, slots
}

// BlockRange is block b's share of the replaced observations of n: the
// ordinal of its first among all replaced ones, and how many it replaces.
func (r Replacement) BlockRange(b, n int) (first, k int) {
	first = ReplaceCount(r.Fraction, b*ReplaceBlockSize)
	return first, ReplaceCount(r.Fraction, min((b+1)*ReplaceBlockSize, n)) - first
}

// CountIn is how many of observations [lo, hi) of n the replacement
// replaces: the blocks wholly inside by ReplaceCount, each block the range
// cuts by drawing its slots (a part of the observations, on one GPU, whose
// edges need not fall on blocks).
func (r Replacement) CountIn(n, lo, hi int) int {
	lo, hi = max(lo, 0), min(hi, n)
	if lo >= hi {
		return 0
	}
	count := 0
	var set [ReplaceBlockSize / 64]uint64
	var slots []uint32
	for b := lo / ReplaceBlockSize; b <= (hi-1)/ReplaceBlockSize; b++ {
		if lo <= b*ReplaceBlockSize && min((b+1)*ReplaceBlockSize, n) <= hi {
			_, k := r.BlockRange(b, n)
			count += k
			continue
		}
		_, slots = r.BlockSlots(b, n, set[:], slots[:0])
		for _, s := range slots {
			if int(s) >= lo && int(s) < hi {
				count++
			}
		}
	}
	return count
}

// drawBelow is draw j of block b: an integer uniform in [0, bound) (64-bit
// multiply-high; the bias, below bound/2^64, is far below any use here).
func drawBelow(key uint64, b, j uint32, bound uint64) uint64 {
	c := philox4x32([4]uint32{j, b, 0x5eed, 0}, [2]uint32{uint32(key), uint32(key >> 32)})
	hi, _ := bits.Mul64(uint64(c[0])<<32|uint64(c[1]), bound)
	return hi
}

// BlockPoints fills lat and lon with block b's fresh points from gen, the
// block form of a generator without an indexed one (clustered), drawn from
// a PCG stream of the step's and the block's own.
func (r Replacement) BlockPoints(gen Generator, b int, lat, lon []float64) {
	var src rand.PCG
	seedPCG(&src, r.PointSeed(), streamReplace, uint64(b))
	gen(rand.New(&src), lat, lon)
}

// PointAt is the fresh point of the t-th replaced observation.
func (r Replacement) PointAt(t int) (lat, lon float64) { return r.Point(uint64(t), r.PointSeed()) }
