package validate

import (
	"math"

	"github.com/paulmach/orb"

	"github.com/geoknn/geoknn/sphere"
)

// Tolerance is the exactness contract's slack in metres.
const Tolerance = 1.0

// Haversine returns the central angle in radians between a and b, given as
// {lon, lat} in degrees. It uses the haversine form 2*asin(sqrt(h)), which is
// accurate for short distances, with h clamped to [0, 1] so that rounding can
// never produce NaN.
func Haversine(a, b orb.Point) float64 {
	return 2 * math.Asin(math.Sqrt(hav(a, b)))
}

// HaversineMetres returns the great-circle distance in metres between a and b
// on a sphere of radius sphere.EarthRadiusMetres.
func HaversineMetres(a, b orb.Point) float64 {
	return Haversine(a, b) * sphere.EarthRadiusMetres
}

// hav returns the haversine of the central angle, clamped to [0, 1]. The
// differences are taken in degrees, where they are exact for nearby points,
// and the longitude difference is wrapped so that points on either side of
// the antimeridian (180 and -180) compare exactly. The explicit float64
// conversions forbid fused multiply-adds so that every call site, inlined or
// not, computes bit-identical values: the brute force and the checkers rely on
// that to compare distances exactly.
func hav(a, b orb.Point) float64 {
	dlon := b[0] - a[0]
	if dlon > 180 {
		dlon -= 360
	} else if dlon < -180 {
		dlon += 360
	}
	sLat := math.Sin(deg2rad(b[1]-a[1]) / 2)
	sLon := math.Sin(deg2rad(dlon) / 2)
	cc := float64(cosLat(a[1]) * cosLat(b[1]))
	h := float64(sLat*sLat) + float64(cc*float64(sLon*sLon))
	switch {
	case h < 0:
		return 0
	case h > 1:
		return 1
	}
	return h
}

func deg2rad(d float64) float64 { return d * (math.Pi / 180) }

// cosLat is the cosine of a latitude in degrees, exactly zero at the poles so
// that all longitudes of a pole are the same point.
func cosLat(lat float64) float64 {
	if lat == 90 || lat == -90 {
		return 0
	}
	return math.Cos(deg2rad(lat))
}

// unit returns p as a unit vector; sin(lat) is exactly ±1 at the poles.
func unit(p orb.Point) [3]float64 {
	c := cosLat(p[1])
	sLon, cLon := math.Sincos(deg2rad(p[0]))
	return [3]float64{c * cLon, c * sLon, math.Sin(deg2rad(p[1]))}
}
