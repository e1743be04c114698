package simulator

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/geoknn/geoknn/internal/parallel"
	"github.com/geoknn/geoknn/sphere"
)

// streamMotion keys the speeds and headings of the references.
const streamMotion = 0x452821e638d01377

// Propagate moves a point at latitude lat and longitude lon (radians),
// travelling with heading (radians clockwise from north), dist metres along
// its great circle, and returns where it arrives and its heading there. It
// is sphere.Propagate, the one definition of the motion model, which the
// GPUs reproduce to the bit when a simulation runs inside their session.
func Propagate(lat, lon, heading, dist float64) (lat2, lon2, heading2 float64) {
	return sphere.Propagate(lat, lon, heading, dist)
}

// Movers is a set of points moving along great circles at constant speeds:
// the moving references of a simulation. The four columns have one entry
// per point; Lat and Lon are radians, Heading radians clockwise from north
// and Speed metres per second.
type Movers struct {
	Lat, Lon, Heading, Speed []float64
}

// Len is the number of points.
func (m *Movers) Len() int { return len(m.Lat) }

// Check reports whether the columns have equal lengths and hold valid
// positions, finite headings and finite non-negative speeds.
func (m *Movers) Check() error {
	if err := sphere.CheckMotion(m.Lat, m.Lon, m.Heading, m.Speed); err != nil {
		return fmt.Errorf("simulator: movers: %w", err)
	}
	return nil
}

// Step moves every point for dt seconds along its great circle (Propagate
// with dist = Speed*dt), updating the positions and headings in place. It
// runs over GOMAXPROCS goroutines; each point's motion is independent of the
// others, so the result does not depend on the number of goroutines. dt may
// be negative (the points retrace their paths).
func (m *Movers) Step(dt float64) {
	m.step(dt, 0)
}

func (m *Movers) step(dt float64, workers int) {
	// Small blocks: 2^16 movers must still spread over every core (a step
	// is on the simulation's critical path).
	parallel.Blocks(m.Len(), 1<<11, workers, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			m.Lat[i], m.Lon[i], m.Heading[i] = Propagate(m.Lat[i], m.Lon[i], m.Heading[i], m.Speed[i]*dt)
		}
	})
}

// RandomMotion fills speed[:n] with speeds uniform in [minSpeed, maxSpeed]
// m/s (all equal to minSpeed when the two are equal) and heading[:n] with
// headings uniform in [0, 2 pi), reproducibly from seed (in blocks of
// points with their own PCG streams, like the generators).
func RandomMotion(n int, seed uint64, minSpeed, maxSpeed float64, speed, heading []float64) error {
	if n < 0 {
		return fmt.Errorf("simulator: negative point count %d", n)
	}
	if len(speed) < n || len(heading) < n {
		return fmt.Errorf("simulator: columns hold %d speeds and %d headings, want %d", len(speed), len(heading), n)
	}
	if err := checkSpeeds(minSpeed, maxSpeed); err != nil {
		return err
	}
	sphere.ForBlocks(n, seed, streamMotion, 0, func(rng *rand.Rand, lo, hi, _ int) {
		for i := lo; i < hi; i++ {
			speed[i] = minSpeed + (maxSpeed-minSpeed)*rng.Float64()
			heading[i] = 2 * math.Pi * rng.Float64()
		}
	})
	return nil
}

func checkSpeeds(minSpeed, maxSpeed float64) error {
	if !(minSpeed >= 0) || !(maxSpeed >= minSpeed) || math.IsInf(maxSpeed, 0) {
		return fmt.Errorf("simulator: speeds [%v, %v] m/s: want finite 0 <= min <= max", minSpeed, maxSpeed)
	}
	return nil
}
