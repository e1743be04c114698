package engine

import (
	"errors"
	"fmt"
	"math"

	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/sphere"
)

// Movers are references that move along great circles inside a session
// (Session.SetMovers): positions in radians, headings in radians clockwise
// from north, speeds in metres per second, one entry a reference.
type Movers struct {
	Lat, Lon, Heading, Speed []float64
}

// Len is the number of references.
func (m Movers) Len() int { return len(m.Lat) }

// Check reports unequal columns, an invalid position, a heading that is not
// finite or a speed that is negative or not finite.
func (m Movers) Check() error {
	if err := sphere.CheckMotion(m.Lat, m.Lon, m.Heading, m.Speed); err != nil {
		return fmt.Errorf("movers: %w", err)
	}
	if n := len(m.Lat); n == 0 || n > 1<<31-1 {
		return fmt.Errorf("movers: %d references (want 1 to %d)", n, 1<<31-1)
	}
	return nil
}

var ErrNoMovers = errors.New("session: no movers (SetMovers)")

// MaxSpeed is the largest speed.
func (m Movers) MaxSpeed() float64 {
	top := 0.0
	for _, v := range m.Speed {
		top = max(top, v)
	}
	return top
}

// Advance is one step of a simulation made inside a session
// (Session.Advance): the movers travel Dt seconds along their great
// circles (sphere.Propagate), then the observations that the replacement
// (Fraction, Seed, Step) draws are replaced by fresh points of Gen
// (sphere.Replacement; Fraction 0 replaces none). The GPU engine does both
// on the device, the CPU engine on the host, to the same bits.
type Advance struct {
	Dt         float64
	Fraction   float64
	Seed, Step uint64
	Gen        index.GenKind
}

// Replacement is a's sphere.Replacement.
func (a Advance) Replacement() sphere.Replacement {
	point := sphere.SphereAt
	if a.Gen == index.GenSeed {
		point = sphere.SeedUniformAt
	}
	return sphere.Replacement{Fraction: a.Fraction, Seed: a.Seed, Step: a.Step, Point: point}
}

// Check reports a step the session cannot make: no movers set while they
// would move, a time step or fraction out of range, a move too long for the
// motion model.
func (a Advance) Check(movers int, maxSpeed float64) error {
	if math.IsNaN(a.Dt) || math.IsInf(a.Dt, 0) {
		return fmt.Errorf("advance: time step %v s", a.Dt)
	}
	if a.Dt != 0 && movers == 0 {
		return fmt.Errorf("advance: no movers in the session (SetMovers)")
	}
	if !(math.Abs(float64(maxSpeed*a.Dt)/sphere.EarthRadiusMetres) < sphere.MaxTrigArg) {
		return fmt.Errorf("advance: %v m/s for %v s is too far for one step", maxSpeed, a.Dt)
	}
	if err := sphere.CheckFraction(a.Fraction); err != nil {
		return fmt.Errorf("advance: %w", err)
	}
	if a.Fraction > 0 && a.Gen != index.GenSphere && a.Gen != index.GenSeed {
		return fmt.Errorf("advance: replacements from generator kind %d (want sphere or seed)", a.Gen)
	}
	return nil
}

// CheckPositions checks the columns Positions fills: pairs of equal
// length, each nil or of the given length.
func CheckPositions(obsLat, obsLon []float64, nobs int, refLat, refLon []float64, nref int) error {
	if len(obsLat) != len(obsLon) || (obsLat != nil && len(obsLat) != nobs) {
		return fmt.Errorf("positions: room for %d and %d observations, want %d", len(obsLat), len(obsLon), nobs)
	}
	if len(refLat) != len(refLon) || (refLat != nil && len(refLat) != nref) {
		return fmt.Errorf("positions: room for %d and %d references, want %d movers", len(refLat), len(refLon), nref)
	}
	return nil
}
