package sphere

import (
	"math"

	"github.com/paulmach/orb"
)

// EarthRadiusMetres is the mean Earth radius (IUGG R1) of the sphere every
// geoknn distance is measured on. It differs from orb.EarthRadius, the
// WGS84 equatorial radius.
const EarthRadiusMetres = 6371008.8

// ToDegrees converts a latitude and longitude in radians to an
// orb.Point{lon, lat} in degrees, clamped to [-90, 90] and [-180, 180]
// against rounding. It is the conversion linking the two forms of every
// generator.
func ToDegrees(lat, lon float64) orb.Point {
	const k = 180 / math.Pi
	return orb.Point{max(-180, min(180, lon*k)), max(-90, min(90, lat*k))}
}
