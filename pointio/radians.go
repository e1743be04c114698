package pointio

import (
	"math"
	"slices"

	"github.com/geoknn/geoknn/internal/parallel"
	"github.com/paulmach/orb"
)

// AppendRadiansParallel is AppendRadians on every core, for large pts.
func AppendRadiansParallel(lat, lon []float64, pts []orb.Point) ([]float64, []float64) {
	n := len(lat)
	lat, lon = slices.Grow(lat, len(pts))[:n+len(pts)], slices.Grow(lon, len(pts))[:n+len(pts)]
	parallel.Blocks(len(pts), 1<<13, 0, func(_, lo, hi int) {
		AppendRadians(lat[n+lo:n+lo], lon[n+lo:n+lo], pts[lo:hi])
	})
	return lat, lon
}

// AppendRadians appends the latitudes and longitudes of pts, in radians,
// to lat and lon: the same operations as geoknn.Degrees, so the same bits.
func AppendRadians(lat, lon []float64, pts []orb.Point) ([]float64, []float64) {
	for _, p := range pts {
		lat, lon = append(lat, p[1]*math.Pi/180), append(lon, p[0]*math.Pi/180)
	}
	return lat, lon
}
