package index

import (
	"fmt"
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/geoknn/geoknn/internal/fdlibm"
	"github.com/geoknn/geoknn/internal/parallel"
	"github.com/geoknn/geoknn/sphere"
)

// Points is a set of points as latitude and longitude columns in radians,
// or a generated set. Exactly one form is set: Lat64/Lon64, Lat32/Lon32 or
// Gen. The engines read the columns in place and never modify them.
type Points struct {
	Lat64, Lon64 []float64
	Lat32, Lon32 []float32
	Gen          *Generated
}

// Generated is a synthetic set defined point by point: point i is
// Kind's sphere.Indexed of (First+i, Seed). It takes no memory: the GPU
// engine makes each job's points on the device (generate.cu) and the CPU
// engine computes each point when it reaches it, the same bits.
type Generated struct {
	Kind  GenKind
	Seed  uint64
	First uint64
	N     int
}

// GenKind is a generator with an indexed form on both sides.
type GenKind int

const (
	GenSphere GenKind = iota // sphere.SphereAt, gen_sphere
	GenSeed                  // sphere.SeedUniformAt, gen_seed
)

// At is the generator's Go form.
func (k GenKind) At() sphere.Indexed {
	if k == GenSeed {
		return sphere.SeedUniformAt
	}
	return sphere.SphereAt
}

// Radians64 wraps float64 radian columns.
func Radians64(lat, lon []float64) Points { return Points{Lat64: lat, Lon64: lon} }

// Radians32 wraps float32 radian columns.
func Radians32(lat, lon []float32) Points { return Points{Lat32: lat, Lon32: lon} }

// Len is the number of points.
func (p Points) Len() int {
	if p.Gen != nil {
		return p.Gen.N
	}
	if p.Lat64 != nil {
		return len(p.Lat64)
	}
	return len(p.Lat32)
}

// Is32 reports whether the columns are float32.
func (p Points) Is32() bool { return p.Lat64 == nil && p.Lat32 != nil }

// At returns point i in radians.
func (p Points) At(i int) (lat, lon float64) {
	if p.Gen != nil {
		return p.Gen.Kind.At()(p.Gen.First+uint64(i), p.Gen.Seed)
	}
	if p.Lat64 != nil {
		return p.Lat64[i], p.Lon64[i]
	}
	return float64(p.Lat32[i]), float64(p.Lon32[i])
}

// Slice returns points [from, to).
func (p Points) Slice(from, to int) Points {
	if p.Gen != nil {
		g := *p.Gen
		g.First, g.N = g.First+uint64(from), to-from
		return Points{Gen: &g}
	}
	if p.Lat64 != nil {
		return Points{Lat64: p.Lat64[from:to], Lon64: p.Lon64[from:to]}
	}
	return Points{Lat32: p.Lat32[from:to], Lon32: p.Lon32[from:to]}
}

// Check verifies that the columns are consistent and every point is a valid
// latitude/longitude; what names the set in errors ("observations").
func (p Points) Check(what string) error {
	if err := p.CheckShape(what); err != nil {
		return err
	}
	return p.CheckValues(what, 0)
}

// CheckShape verifies the form alone: one kind of columns, of equal
// lengths, or a well-formed generated set.
func (p Points) CheckShape(what string) error {
	if p.Gen != nil {
		return p.checkGenerated(what)
	}
	if (p.Lat64 == nil) == (p.Lat32 == nil) && (len(p.Lat64) > 0 || len(p.Lat32) > 0) {
		return fmt.Errorf("%s: set either float64 or float32 columns, not both", what)
	}
	if len(p.Lat64) != len(p.Lon64) || len(p.Lat32) != len(p.Lon32) {
		return fmt.Errorf("%s: latitude and longitude columns differ in length", what)
	}
	return nil
}

// CheckValues verifies that every point is a valid latitude/longitude
// (generated points are, by construction); errors number the points from
// first, for a slice of a larger set.
func (p Points) CheckValues(what string, first int) error { return p.CheckValuesOn(what, first, nil) }

// CheckValuesOn is CheckValues on team's workers.
func (p Points) CheckValuesOn(what string, first int, team *parallel.Team) error {
	if p.Gen != nil {
		return nil
	}
	bad := -1
	if p.Is32() {
		bad = firstInvalid(p.Lat32, p.Lon32, team)
	} else {
		bad = firstInvalid(p.Lat64, p.Lon64, team)
	}
	return p.invalidAt(what, first, bad)
}

// Degrees converted to radians round: float32(pi/2) is 4.4e-8 above pi/2,
// so the bounds allow the rounding of the columns' precision.
const slack32, slack64 = 1e-6, 1e-12

// ValidBounds are the largest latitude and longitude magnitudes, in
// radians, that CheckValues accepts in float64 columns (float32 with is32:
// compare in float32 after converting them), for a check made elsewhere
// (the GPUs') to agree with it.
func ValidBounds(is32 bool) (latMax, lonMax float64) {
	slack := slack64
	if is32 {
		slack = slack32
	}
	return math.Pi/2 + slack, math.Pi + slack
}

// CopyChecked writes p's latitude then longitude column, in their
// precision, to dst (room for 2 x p.Len() values) and checks every point
// as CheckValues does, in one pass over the columns on every core: a GPU
// job staging its points reads them once, not once to check and once to
// copy (2^24 points on one GPU: 6.4 ms checking beside 8.4 ms staging).
func (p Points) CopyChecked(dst unsafe.Pointer, what string, first int) error {
	if p.Gen != nil {
		return fmt.Errorf("%s: a generated set has no columns to copy", what)
	}
	m, bad := p.Len(), -1
	if p.Is32() {
		bad = copyFirstInvalid(unsafe.Slice((*float32)(dst), 2*m), p.Lat32, p.Lon32)
	} else {
		bad = copyFirstInvalid(unsafe.Slice((*float64)(dst), 2*m), p.Lat64, p.Lon64)
	}
	return p.invalidAt(what, first, bad)
}

// copyFirstInvalid copies lat then lon into dst, a block at a time on
// every core, each block checked while in cache; it returns firstInvalid's
// answer.
func copyFirstInvalid[T float32 | float64](dst, lat, lon []T) int {
	m := len(lat)
	dlat, dlon := dst[:m], dst[m:2*m]
	var first atomic.Int64
	first.Store(math.MaxInt64)
	parallel.Blocks(m, memoryBoundBlock, 0, func(_, lo, hi int) {
		copy(dlat[lo:hi], lat[lo:hi])
		copy(dlon[lo:hi], lon[lo:hi])
		if bad := firstInvalidIn(dlat[lo:hi], dlon[lo:hi]); bad >= 0 {
			lowerTo(&first, int64(lo+bad))
		}
	})
	if v := first.Load(); v != math.MaxInt64 {
		return int(v)
	}
	return -1
}

// invalidAt is CheckValues' error for point bad (none when bad < 0).
func (p Points) invalidAt(what string, first, bad int) error {
	if bad < 0 {
		return nil
	}
	latMax, _ := ValidBounds(p.Is32())
	lat, lon := p.At(bad)
	if !(lat >= -latMax && lat <= latMax) {
		return fmt.Errorf("%s: point %d: latitude %v rad is not in [-pi/2, pi/2]", what, first+bad, lat)
	}
	return fmt.Errorf("%s: point %d: longitude %v rad is not in [-pi, pi]", what, first+bad, lon)
}

// firstInvalid is the index of the first point out of range (or NaN), or
// -1, checked on every core: a query of 2^27 points would otherwise spend
// a noticeable part of a GPU run here.
func firstInvalid[T float32 | float64](lat, lon []T, team *parallel.Team) int {
	if len(lat) <= memoryBoundBlock {
		// One block: checked here, without the closure and counter that
		// a one-point query (a server's) would allocate.
		return firstInvalidIn(lat, lon)
	}
	var first atomic.Int64
	first.Store(math.MaxInt64)
	team.Blocks(len(lat), memoryBoundBlock, func(_, lo, hi int) {
		if bad := firstInvalidIn(lat[lo:hi], lon[lo:hi]); bad >= 0 {
			lowerTo(&first, int64(lo+bad))
		}
	})
	if v := first.Load(); v != math.MaxInt64 {
		return int(v)
	}
	return -1
}

// firstInvalidIn is the first point of a block out of range (or NaN), or
// -1.
func firstInvalidIn[T float32 | float64](lat, lon []T) int {
	var zero T
	_, is32 := any(zero).(float32)
	latMax64, lonMax64 := ValidBounds(is32)
	latMax, lonMax := T(latMax64), T(lonMax64)
	lon = lon[:len(lat)]
	for i := range lat {
		if !(lat[i] >= -latMax && lat[i] <= latMax && lon[i] >= -lonMax && lon[i] <= lonMax) {
			return i
		}
	}
	return -1
}

// lowerTo lowers v to x if x is lower.
func lowerTo(v *atomic.Int64, x int64) {
	for cur := v.Load(); x < cur && !v.CompareAndSwap(cur, x); cur = v.Load() {
	}
}

// checkGenerated checks a generated set's form; its points are valid by
// construction.
func (p Points) checkGenerated(what string) error {
	if p.Lat64 != nil || p.Lat32 != nil {
		return fmt.Errorf("%s: set columns or a generator, not both", what)
	}
	if p.Gen.N < 0 || (p.Gen.Kind != GenSphere && p.Gen.Kind != GenSeed) {
		return fmt.Errorf("%s: generated set of %d points of kind %d", what, p.Gen.N, p.Gen.Kind)
	}
	return nil
}

// Unit returns the float64 unit vector of (lat, lon) radians, the GPU's
// bit for bit (sphere.cuh unit_go): sphere.Sincos, which no build fuses.
func Unit(lat, lon float64) (x, y, z float64) {
	sl, cl := sphere.Sincos(lat)
	sn, cn := sphere.Sincos(lon)
	return cl * cn, cl * sn, sl
}

// Chord2 is the squared chord between two unit vectors. The explicit
// float64 conversions forbid fused multiply-adds, so the value is the same on
// every architecture and equals the GPU's refine kernel (haversine.cu chord2d).
func Chord2(ax, ay, az, bx, by, bz float64) float64 {
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
	return 2 * fdlibm.Asin(h)
}

// memoryBoundBlock is the elements a goroutine takes at a time in a
// memory-bound loop: 64 blocks for 2^22, so that a core that starts late
// or runs slow leaves no long tail.
const memoryBoundBlock = 1 << 16

// ParallelFor splits [0, n) over the cores for memory-bound loops.
func ParallelFor(n int, fn func(lo, hi int)) {
	parallel.Blocks(n, memoryBoundBlock, 0, func(_, lo, hi int) { fn(lo, hi) })
}

func ParallelCopy[T any](dst, src []T) {
	ParallelFor(len(src), func(lo, hi int) { copy(dst[lo:hi], src[lo:hi]) })
}

// Unit4Go is unit of four points: out holds their x, then y, then z.
func Unit4Go(lat, lon *[4]float64, out *[12]float64) {
	for e := range 4 {
		out[e], out[4+e], out[8+e] = Unit(lat[e], lon[e])
	}
}

// chordToAngle4Go is ChordToAngle of four squared chords.
func chordToAngle4Go(d2, out *[4]float64) {
	for e := range 4 {
		out[e] = ChordToAngle(d2[e])
	}
}
