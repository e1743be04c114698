package geoknn

import (
	"fmt"
	"math"

	"github.com/geoknn/geoknn/internal/index"
	"github.com/paulmach/orb"
)

// Points is a set of points as latitude and longitude columns in radians,
// in float64 (Radians64) or float32 (Radians32). The engines read the
// columns in place and never modify them: the caller keeps them unchanged
// while a query that reads them runs.
type Points struct{ cols index.Points }

// Radians64 wraps float64 radian columns of equal length.
func Radians64(latRad, lonRad []float64) Points {
	return Points{index.Radians64(latRad, lonRad)}
}

// Radians32 wraps float32 radian columns of equal length: half the memory
// and half the bytes sent to a GPU, for callers that hold large arrays.
func Radians32(latRad, lonRad []float32) Points {
	return Points{index.Radians32(latRad, lonRad)}
}

// Len is the number of points.
func (p Points) Len() int { return p.cols.Len() }

// At returns point i in radians.
func (p Points) At(i int) (latRad, lonRad float64) { return p.cols.At(i) }

// Slice returns points [from, to), sharing the columns.
func (p Points) Slice(from, to int) Points { return Points{p.cols.Slice(from, to)} }

// Float64 returns the float64 columns, or nil, nil when p holds float32 or
// is Generated.
func (p Points) Float64() (latRad, lonRad []float64) { return p.cols.Lat64, p.cols.Lon64 }

// Float32 returns the float32 columns, or nil, nil when p holds float64.
func (p Points) Float32() (latRad, lonRad []float32) { return p.cols.Lat32, p.cols.Lon32 }

// Check reports the first point that is not a valid latitude and longitude
// (NaN, infinite, or out of range), naming the set with what.
func (p Points) Check(what string) error { return p.cols.Check(what) }

// Generator names a synthetic point set whose point i is a pure function
// of (i, seed): the GPU engine makes each job's points on the device, bit
// for bit as the CPU engine computes them.
type Generator int

const (
	// UniformSphere is uniform on the sphere (sphere.SphereAt).
	UniformSphere Generator = iota
	// UniformDegrees is uniform in latitude and longitude degrees
	// (sphere.SeedUniformAt), crowding towards the poles.
	UniformDegrees
)

// String is the generator's name on the command line: "sphere" or "seed".
func (g Generator) String() string {
	switch g {
	case UniformSphere:
		return "sphere"
	case UniformDegrees:
		return "seed"
	}
	return fmt.Sprintf("Generator(%d)", int(g))
}

// ParseGenerator parses "sphere" (UniformSphere) or "seed" (UniformDegrees).
func ParseGenerator(s string) (Generator, error) {
	switch s {
	case "sphere":
		return UniformSphere, nil
	case "seed":
		return UniformDegrees, nil
	}
	return 0, fmt.Errorf("geoknn: no generator %q (sphere and seed are)", s)
}

// kind is the engine's name for g.
func (g Generator) kind() (index.GenKind, error) {
	switch g {
	case UniformSphere:
		return index.GenSphere, nil
	case UniformDegrees:
		return index.GenSeed, nil
	}
	return 0, fmt.Errorf("geoknn: %v is not a generator", g)
}

// Generated is the synthetic set of n points that g draws with seed. The
// set takes no memory, and At computes any one point; the points are those
// of sphere.Sphere and sphere.SeedUniform.
func Generated(g Generator, n int, seed uint64) (Points, error) {
	kind, err := g.kind()
	if err != nil {
		return Points{}, err
	}
	if n < 0 {
		return Points{}, fmt.Errorf("geoknn: %d points", n)
	}
	return Points{index.Points{Gen: &index.Generated{Kind: kind, Seed: seed, N: n}}}, nil
}

// Degrees validates points (orb.Point{lon, lat} in degrees) and converts
// them to the float64 radian columns the engines read. An error names the
// first invalid point: "12: latitude 91 is not in [-90, 90]".
func Degrees(pts []orb.Point) (Points, error) {
	lat, lon := make([]float64, len(pts)), make([]float64, len(pts))
	for i, p := range pts {
		if !(p.Lat() >= -90 && p.Lat() <= 90) {
			return Points{}, fmt.Errorf("%d: latitude %v is not in [-90, 90]", i, p.Lat())
		}
		if !(p.Lon() >= -180 && p.Lon() <= 180) {
			return Points{}, fmt.Errorf("%d: longitude %v is not in [-180, 180]", i, p.Lon())
		}
		lat[i], lon[i] = p.Lat()*math.Pi/180, p.Lon()*math.Pi/180
	}
	return Radians64(lat, lon), nil
}
