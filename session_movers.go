package geoknn

import (
	"context"
	"fmt"

	"github.com/geoknn/geoknn/internal/engine"
)

// Movers are references that move along great circles at constant speeds,
// kept inside a Session (SetMovers): positions in radians, headings in
// radians clockwise from north, speeds in metres per second.
type Movers struct {
	LatRad, LonRad, HeadingRad, SpeedMetresPerSecond []float64
}

// Advance is one step of a simulation made inside a Session (Session.Advance):
// the movers travel DtSeconds along their great circles
// (sphere.Propagate), then round(Fraction*Len) observations are replaced by
// fresh points of the generator Gen (UniformSphere by default), drawn as
// sphere.Replacement{Fraction, Seed, Step} draws them. On GPUs both happen
// on the device where the points live, to the same bits as the CPU engine
// computes them on the host.
type Advance struct {
	DtSeconds  float64
	Fraction   float64
	Seed, Step uint64
	Gen        Generator
}

// SetMovers makes m (copied) the session's moving references: Advance
// moves them and StartMovers queries against them, and on GPUs they never
// leave the device.
func (t *Session) SetMovers(ctx context.Context, m Movers) error {
	if err := t.ready(ctx); err != nil {
		return err
	}
	em := engine.Movers{Lat: m.LatRad, Lon: m.LonRad, Heading: m.HeadingRad, Speed: m.SpeedMetresPerSecond}
	if err := t.es.SetMovers(ctx, em); err != nil {
		return fmt.Errorf("geoknn: %w", err)
	}
	return nil
}

// Advance makes step st inside the session. On GPUs it only queues the
// work: the next query runs after it.
func (t *Session) Advance(ctx context.Context, st Advance) error {
	if err := t.ready(ctx); err != nil {
		return err
	}
	a := engine.Advance{Dt: st.DtSeconds, Fraction: st.Fraction, Seed: st.Seed, Step: st.Step}
	if st.Fraction > 0 {
		kind, err := st.Gen.kind()
		if err != nil {
			return fmt.Errorf("geoknn: advance: %w", err)
		}
		a.Gen = kind
	}
	if err := t.es.Advance(ctx, a); err != nil {
		return fmt.Errorf("geoknn: %w", err)
	}
	return nil
}

// StartMovers is Start against the session's movers.
func (t *Session) StartMovers(ctx context.Context, res *Result) (*Pending, error) {
	if err := t.ready(ctx); err != nil {
		return nil, err
	}
	out, cols := t.resultInto(res)
	q, err := t.es.StartMovers(ctx, out)
	if err != nil {
		cols.dropUnkept()
		return nil, fmt.Errorf("geoknn: %w", err)
	}
	return &Pending{q: q, res: res, cols: cols}, nil
}

// Positions copies the current observations (obsLat, obsLon) and movers
// (refLat, refLon) out, in radians; either pair may be nil.
func (t *Session) Positions(ctx context.Context, obsLat, obsLon, refLat, refLon []float64) error {
	if err := t.ready(ctx); err != nil {
		return err
	}
	if err := t.es.Positions(ctx, obsLat, obsLon, refLat, refLon); err != nil {
		return fmt.Errorf("geoknn: %w", err)
	}
	return nil
}
