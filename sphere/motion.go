package sphere

import (
	"fmt"
	"math"
)

// Propagate moves a point at latitude lat and longitude lon (radians),
// travelling with heading (radians clockwise from north), dist metres along
// its great circle. It returns the new position, latitude in [-π/2, π/2]
// and longitude in [-π, π], and the heading there: the direction of the
// same great circle at the new position, so that successive calls follow one
// great circle exactly (a point heading north over a pole comes down the
// other side on the meridian 180° away, heading south).
//
// It rotates unit vectors in float64: the position p and the unit tangent t
// in the direction of travel become p cos d + t sin d and t cos d - p sin d
// for the central angle d = dist/EarthRadiusMetres, which is exact for any
// distance and has no singularity at the poles or the antimeridian. At a
// pole, where north is undefined, the heading is measured against the
// meridian of the returned longitude, as the formulas for (lat, lon) give
// in the limit; a later call that starts from the returned values continues
// on the same great circle.
//
// Every operation rounds on its own (see sincos), so the GPU's twin
// (internal/kernels/move.cu) moves references to the same bits. The central
// angle must be below MaxTrigArg radians (NaN otherwise).
func Propagate(lat, lon, heading, dist float64) (lat2, lon2, heading2 float64) {
	sLat, cLat := sincos(lat)
	sLon, cLon := sincos(lon)
	sH, cH := sincos(heading)
	// Position, east and north at (lat, lon).
	p := vec{mul(cLat, cLon), mul(cLat, sLon), sLat}
	e := vec{-sLon, cLon, 0}
	nth := vec{-mul(sLat, cLon), -mul(sLat, sLon), cLat}
	// Unit tangent in the direction of travel.
	t := vec{mul(sH, e.x) + mul(cH, nth.x), mul(sH, e.y) + mul(cH, nth.y), mul(cH, nth.z)}
	sD, cD := sincos(float64(dist / EarthRadiusMetres))
	q := p.scale(cD).add(t.scale(sD))
	u := t.scale(cD).sub(p.scale(sD))
	r := math.Sqrt(float64(mul(q.x, q.x) + mul(q.y, q.y)))
	lat2, lon2 = atan2(q.z, r), atan2(q.y, q.x)
	if r > 1e-100 {
		// East and north at q, both scaled by r (which atan2 ignores):
		// cos(lat2) = r, sin(lat2) = qz, cos(lon2) = qx/r, sin(lon2) = qy/r.
		east := float64(-mul(q.y, u.x) + mul(q.x, u.y))
		north := float64(-mul(q.z, float64(mul(q.x, u.x)+mul(q.y, u.y))) + mul(mul(r, r), u.z))
		return lat2, lon2, atan2(east, north)
	}
	// At a pole: north along the meridian of the returned longitude.
	sLat, cLat = sincos(lat2)
	sLon, cLon = sincos(lon2)
	east := float64(-mul(sLon, u.x) + mul(cLon, u.y))
	north := float64(float64(-mul(mul(sLat, cLon), u.x)-mul(mul(sLat, sLon), u.y)) + mul(cLat, u.z))
	return lat2, lon2, atan2(east, north)
}

// CheckMotion reports the first point of a moving set (one entry a point
// in each column; see Propagate) that cannot move: columns of unequal
// lengths, an invalid position, a heading that is not finite (or beyond
// MaxTrigArg) or a speed that is negative or not finite.
func CheckMotion(lat, lon, heading, speed []float64) error {
	n := len(lat)
	if len(lon) != n || len(heading) != n || len(speed) != n {
		return fmt.Errorf("%d latitudes, %d longitudes, %d headings and %d speeds", n, len(lon), len(heading), len(speed))
	}
	for i := range n {
		if !(math.Abs(lat[i]) <= math.Pi/2) || !(math.Abs(lon[i]) <= math.Pi) {
			return fmt.Errorf("point %d at lat %v, lon %v rad is not a valid position", i, lat[i], lon[i])
		}
		if !(math.Abs(heading[i]) < MaxTrigArg) || !(speed[i] >= 0) || math.IsInf(speed[i], 0) {
			return fmt.Errorf("point %d has heading %v rad and speed %v m/s", i, heading[i], speed[i])
		}
	}
	return nil
}

// UnitVector is the float64 unit vector of (lat, lon) radians, with the
// trigonometry of Propagate (the same bits as math.Sincos on amd64).
func UnitVector(lat, lon float64) (x, y, z float64) {
	sl, cl := sincos(lat)
	sn, cn := sincos(lon)
	return mul(cl, cn), mul(cl, sn), sl
}

// vec is a 3-vector whose operations round one at a time.
type vec struct{ x, y, z float64 }

func mul(a, b float64) float64 { return float64(a * b) }

func (a vec) scale(s float64) vec { return vec{mul(a.x, s), mul(a.y, s), mul(a.z, s)} }
func (a vec) add(b vec) vec       { return vec{float64(a.x + b.x), float64(a.y + b.y), float64(a.z + b.z)} }
func (a vec) sub(b vec) vec       { return vec{float64(a.x - b.x), float64(a.y - b.y), float64(a.z - b.z)} }
