package engine

import (
	"fmt"
	"math"
	"sync"
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
}

func prepareRefs(ref Points) *refSet {
	n := ref.Len()
	s := &refSet{
		x: make([]float64, 0, n), y: make([]float64, 0, n), z: make([]float64, 0, n),
		xyz64: make([]float64, 0, 3*n), xyzw: make([]float32, 0, 4*n), orig: make([]uint32, 0, n),
	}
	seen := make(map[[3]float64]struct{}, n)
	for i := 0; i < n; i++ {
		x, y, z := unit(ref.At(i))
		key := [3]float64{x, y, z}
		if _, dup := seen[key]; dup {
			s.dups = true
			continue
		}
		seen[key] = struct{}{}
		s.x, s.y, s.z = append(s.x, x), append(s.y, y), append(s.z, z)
		s.xyz64 = append(s.xyz64, x, y, z)
		s.xyzw = append(s.xyzw, float32(x), float32(y), float32(z), 0)
		s.orig = append(s.orig, uint32(i))
	}
	s.n = len(s.orig)
	return s
}
