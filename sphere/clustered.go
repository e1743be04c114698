package sphere

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/paulmach/orb"
)

// Defaults used by ByName for "clustered".
const (
	DefaultClusters = 64
	DefaultSpreadKm = 200.0
)

// Clustered returns n points in Gaussian blobs around clusters centres
// uniform on the sphere. Each point picks a centre at random and is moved
// from it by a Gaussian displacement of standard deviation spreadKm along
// each axis of the tangent plane, carried back onto the sphere along the
// great circle in its direction (the exponential map), so it is valid
// everywhere, poles and antimeridian included. It returns nil if n is
// negative, clusters is less than one or spreadKm is negative or not finite.
func Clustered(n int, seed uint64, clusters int, spreadKm float64) []orb.Point {
	f, err := clusteredBlock(seed, clusters, spreadKm)
	if err != nil {
		return nil
	}
	return points(n, seed, workers(), f)
}

// ClusteredRadians fills lat[:n] and lon[:n] with Clustered's points in
// radians.
func ClusteredRadians(n int, seed uint64, clusters int, spreadKm float64, lat, lon []float64) error {
	f, err := clusteredBlock(seed, clusters, spreadKm)
	if err != nil {
		return err
	}
	return columns(n, seed, workers(), f, lat, lon)
}

// frame is a cluster centre c with an orthonormal basis e, u of the
// tangent plane there.
type frame struct{ c, e, u [3]float64 }

// centres draws the cluster centres uniformly on the sphere from their own
// stream, so that every block sees the same centres.
func centres(seed uint64, clusters int) []frame {
	src := &rand.PCG{}
	seedPCG(src, seed, streamCentres, 0)
	rng := rand.New(src)
	fr := make([]frame, clusters)
	for i := range fr {
		z := 2*rng.Float64() - 1
		sLon, cLon := math.Sincos((2*rng.Float64() - 1) * math.Pi)
		r := math.Sqrt(1 - z*z)
		fr[i] = newFrame([3]float64{r * cLon, r * sLon, z})
	}
	return fr
}

// newFrame completes c to an orthonormal basis. East is undefined at the
// poles, so the helper axis is whichever of z and x is far from c; the
// Gaussian is isotropic, so the basis orientation does not matter.
func newFrame(c [3]float64) frame {
	a := [3]float64{0, 0, 1}
	if math.Abs(c[2]) > 0.9 {
		a = [3]float64{1, 0, 0}
	}
	e := cross(a, c)
	n := math.Sqrt(e[0]*e[0] + e[1]*e[1] + e[2]*e[2])
	e = [3]float64{e[0] / n, e[1] / n, e[2] / n}
	return frame{c: c, e: e, u: cross(c, e)}
}

func cross(a, b [3]float64) [3]float64 {
	return [3]float64{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
}

// displace moves from the centre by the tangent vector (x, y) radians along
// the great circle in its direction, returning latitude and longitude in
// radians.
func (f *frame) displace(x, y float64) (lat, lon float64) {
	// Plain square roots rather than math.Hypot: nothing here can overflow.
	d := math.Sqrt(x*x + y*y)
	p := f.c
	if d > 0 {
		s, c := math.Sincos(d)
		s /= d
		for i := range p {
			p[i] = c*f.c[i] + s*(x*f.e[i]+y*f.u[i])
		}
	}
	return math.Atan2(p[2], math.Sqrt(p[0]*p[0]+p[1]*p[1])), math.Atan2(p[1], p[0])
}

func clusteredBlock(seed uint64, clusters int, spreadKm float64) (Generator, error) {
	if clusters < 1 {
		return nil, fmt.Errorf("sphere: %d clusters, want at least one", clusters)
	}
	if !(spreadKm >= 0) || math.IsInf(spreadKm, 0) {
		return nil, fmt.Errorf("sphere: cluster spread %v km is not a finite non-negative number", spreadKm)
	}
	fr := centres(seed, clusters)
	sigma := spreadKm / (EarthRadiusMetres / 1000)
	return func(rng *rand.Rand, lat, lon []float64) {
		for k := range lat {
			f := &fr[rng.IntN(len(fr))]
			lat[k], lon[k] = f.displace(rng.NormFloat64()*sigma, rng.NormFloat64()*sigma)
		}
	}, nil
}
