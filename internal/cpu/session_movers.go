package cpu

import (
	"context"
	"slices"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/parallel"
	"github.com/geoknn/geoknn/sphere"
)

func (s *cpuSession) SetMovers(_ context.Context, m engine.Movers) error {
	if err := m.Check(); err != nil {
		return err
	}
	s.mv = engine.Movers{Lat: slices.Clone(m.Lat), Lon: slices.Clone(m.Lon), Heading: slices.Clone(m.Heading),
		Speed: slices.Clone(m.Speed)}
	s.mvTop = m.MaxSpeed()
	return nil
}

// Advance moves the movers and replaces the drawn observations, each over
// every core.
func (s *cpuSession) Advance(ctx context.Context, a engine.Advance) error {
	if err := a.Check(s.mv.Len(), s.mvTop); err != nil {
		return err
	}
	if a.Dt != 0 {
		m := s.mv
		parallel.Blocks(m.Len(), 1<<11, 0, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				m.Lat[i], m.Lon[i], m.Heading[i] = sphere.Propagate(m.Lat[i], m.Lon[i], m.Heading[i], float64(m.Speed[i]*a.Dt))
			}
		})
	}
	if a.Fraction == 0 {
		return ctx.Err()
	}
	n, rep := s.obs.Len(), a.Replacement()
	parallel.Blocks(sphere.Blocks(n), 1, 0, func(_, lo, hi int) {
		set := make([]uint64, sphere.ReplaceBlockSize/64)
		var slots []uint32
		for b := lo; b < hi; b++ {
			var first int
			first, slots = rep.BlockSlots(b, n, set, slots[:0])
			for j, i := range slots {
				lat, lon := rep.PointAt(first + j)
				s.setObs(int(i), lat, lon)
			}
		}
	})
	s.replaced += sphere.ReplaceCount(a.Fraction, n)
	return ctx.Err()
}

// setObs makes observation i the point (lat, lon), new since the last query.
func (s *cpuSession) setObs(i int, lat, lon float64) {
	if s.obs.Is32() {
		s.obs.Lat32[i], s.obs.Lon32[i] = float32(lat), float32(lon)
	} else {
		s.obs.Lat64[i], s.obs.Lon64[i] = lat, lon
	}
	s.prev[i] = engine.NoAnswer
}

func (s *cpuSession) StartMovers(ctx context.Context, out engine.Result) (engine.Pending, error) {
	if s.mv.Len() == 0 {
		return nil, engine.ErrNoMovers
	}
	return s.Start(ctx, index.Radians64(s.mv.Lat, s.mv.Lon), out)
}

func (s *cpuSession) Positions(_ context.Context, obsLat, obsLon, refLat, refLon []float64) error {
	if err := engine.CheckPositions(obsLat, obsLon, s.obs.Len(), refLat, refLon, s.mv.Len()); err != nil {
		return err
	}
	if obsLat != nil {
		parallel.Blocks(len(obsLat), 1<<14, 0, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				obsLat[i], obsLon[i] = s.obs.At(i)
			}
		})
	}
	copy(refLat, s.mv.Lat)
	copy(refLon, s.mv.Lon)
	return nil
}
