package gpu

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
	"unsafe"

	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/sphere"
)

// moverBufs are one GPU's copy of a session's movers: every GPU moves all
// of them (the same kernel, the same bits) and ranks its observations
// against them, so no reference crosses PCIe between steps.
type moverBufs struct {
	lat, lon, heading, speed buffer
	sampleIdx, sampleOut     buffer // the planning sample's gather (local indices, float64 pairs)
}

func (m *moverBufs) free(p *residentPart) error {
	drv := p.d.drv
	return errors.Join(m.lat.free(drv), m.lon.free(drv), m.heading.free(drv), m.speed.free(drv),
		m.sampleIdx.free(drv), m.sampleOut.free(drv))
}

func (s *gpuSession) SetMovers(ctx context.Context, m engine.Movers) error {
	if err := m.Check(); err != nil {
		return err
	}
	s.g.mu.Lock()
	defer s.g.mu.Unlock()
	if s.closed {
		return errors.New("session: closed")
	}
	err := onEach(ctx, s.devices(), func(_ context.Context, k int) error { return s.parts[k].setMovers(m) })
	if err != nil {
		s.nmov = 0
		return fmt.Errorf("session: movers: %w", err)
	}
	s.nmov, s.mvTop = m.Len(), m.MaxSpeed()
	s.mvLat, s.mvLon = slices.Clone(m.Lat), slices.Clone(m.Lon)
	s.mvHostFresh, s.mvUnitsStale = true, false
	s.plan.Uses = 0 // new references: plan again
	return nil
}

// setMovers uploads m and makes the movers' unit vectors the part's
// references.
func (p *residentPart) setMovers(m engine.Movers) error {
	drv, n := p.d.drv, m.Len()
	mv := &p.movers
	err := ensureAll(drv, []alloc{{buf: &mv.lat, bytes: 8 * n}, {buf: &mv.lon, bytes: 8 * n},
		{buf: &mv.heading, bytes: 8 * n}, {buf: &mv.speed, bytes: 8 * n}}, 0)
	if err != nil {
		return err
	}
	if err := drv.StreamSynchronize(p.stream); err != nil {
		return err
	}
	for _, c := range []struct {
		dst *buffer
		src []float64
	}{{&mv.lat, m.Lat}, {&mv.lon, m.Lon}, {&mv.heading, m.Heading}, {&mv.speed, m.Speed}} {
		if err := copyToDevice(drv, c.dst, c.src); err != nil {
			return err
		}
	}
	// Copies from pageable memory may return before the data arrives, and
	// the stream does not wait for them.
	if err := drv.Synchronize(); err != nil {
		return err
	}
	if err := p.moveMovers(n, 0, false); err != nil {
		return err
	}
	return drv.StreamSynchronize(p.stream)
}

// moveMovers queues the movers' move by dt seconds (move) and the unit
// vectors of where they are as the part's references.
func (p *residentPart) moveMovers(n int, dt float64, move bool) error {
	drv, mv := p.d.drv, &p.movers
	if err := ensureAll(drv, []alloc{{buf: &p.refs.ref32, bytes: 16 * n}, {buf: &p.refs.ref64, bytes: 24 * n}}, 0); err != nil {
		return err
	}
	p.refs.dups = false
	return p.d.move.run(drv, p.stream, moveLaunch{n: n, lat: mv.lat.ptr, lon: mv.lon.ptr, heading: mv.heading.ptr,
		speed: mv.speed.ptr, dt: dt, move: move, xyz: p.refs.ref64.ptr, xyzw: p.refs.ref32.ptr})
}

// Advance queues the step on every GPU: the movers moved, the replaced
// observations drawn and written where they live.
func (s *gpuSession) Advance(ctx context.Context, a engine.Advance) error {
	if err := a.Check(s.nmov, s.mvTop); err != nil {
		return err
	}
	s.g.mu.Lock()
	defer s.g.mu.Unlock()
	if s.closed {
		return errors.New("session: closed")
	}
	err := onEach(ctx, s.devices(), func(_ context.Context, k int) error { return s.parts[k].advance(s, a) })
	if err != nil {
		return fmt.Errorf("session: advance: %w", err)
	}
	if a.Dt != 0 {
		s.mvHostFresh, s.mvUnitsStale = false, false
	}
	if a.Fraction > 0 {
		s.sampleStale = true
		s.replaced += sphere.ReplaceCount(a.Fraction, s.n)
	}
	return nil
}

func (p *residentPart) advance(s *gpuSession, a engine.Advance) error {
	if a.Dt != 0 {
		if err := p.moveMovers(s.nmov, a.Dt, true); err != nil {
			return err
		}
	}
	if a.Fraction == 0 {
		return nil
	}
	// As for replacements sent by the host: patched where the old records
	// were, marked and listed, until the next sort.
	var sorted, pos = p.sorted.ptr, p.pos.ptr
	if p.sortedShape.G == 0 {
		sorted, pos = 0, 0
	} else {
		p.patched += a.Replacement().CountIn(s.n, p.lo, p.hi)
	}
	var recs = p.recs.ptr
	if s.opts.Algorithm != engine.Grid {
		recs = 0
	}
	return p.d.resident.runDraw(p.d.drv, p.stream, drawLaunch{prec: prec(s.is32), rep: a.Replacement(), gen: a.Gen,
		n: s.n, lo: p.lo, hi: p.hi, lat: p.lat.ptr, lon: p.lon.ptr, recs: recs, sorted: sorted, pos: pos,
		prev: p.prev.ptr, patched: p.patchList()})
}

// StartMovers queues the query against the movers on every GPU. The grid
// plan needs the movers and the planning sample on the host only when it is
// made again (every Replan queries): then they are read back.
func (s *gpuSession) StartMovers(ctx context.Context, out engine.Result) (engine.Pending, error) {
	start := time.Now()
	want, err := s.checkOut(out)
	if err != nil {
		return nil, err
	}
	s.g.mu.Lock()
	if s.closed || s.nmov == 0 {
		s.g.mu.Unlock()
		if s.closed {
			return nil, errors.New("session: closed")
		}
		return nil, engine.ErrNoMovers
	}
	if err := s.planMovers(); err != nil {
		s.g.mu.Unlock()
		return nil, fmt.Errorf("session: %w", err)
	}
	return s.enqueueAll(ctx, start, out, want, true)
}

// planMovers brings the grid plan up to date for the movers.
func (s *gpuSession) planMovers() error {
	if s.opts.Algorithm == engine.Grid && s.plan.Due(s.refs.N) {
		if err := s.refreshHost(); err != nil {
			return err
		}
		s.refs.Prepare(index.Radians64(s.mvLat, s.mvLon))
	}
	s.plan.Update(s.opts, s.sample, &s.refs, index.GPUSessionGridCost)
	return nil
}

// refreshHost reads back the movers' positions and the planning sample
// when the device changed them.
func (s *gpuSession) refreshHost() error {
	if !s.mvHostFresh {
		p := s.parts[0]
		err := p.d.onThread(func() error {
			if err := p.d.drv.StreamSynchronize(p.stream); err != nil {
				return err
			}
			return errors.Join(copyFromDevice(p.d.drv, s.mvLat, &p.movers.lat), copyFromDevice(p.d.drv, s.mvLon, &p.movers.lon))
		})
		if err != nil {
			return fmt.Errorf("reading the movers back: %w", err)
		}
		s.mvHostFresh = true
	}
	if !s.sampleStale {
		return nil
	}
	err := onEach(context.Background(), s.devices(), func(_ context.Context, k int) error {
		return s.parts[k].gatherSample(s)
	})
	if err != nil {
		return fmt.Errorf("reading the planning sample back: %w", err)
	}
	s.sampleStale = false
	return nil
}

// gatherSample reads the part's observations of the planning sample back
// into it.
func (p *residentPart) gatherSample(s *gpuSession) error {
	drv, mv := p.d.drv, &p.movers
	a, _ := slices.BinarySearch(s.sample.Idx, uint32(p.lo))
	b, _ := slices.BinarySearch(s.sample.Idx, uint32(p.hi))
	k := b - a
	if k == 0 {
		return nil
	}
	local := make([]uint32, k)
	for j, i := range s.sample.Idx[a:b] {
		local[j] = i - uint32(p.lo)
	}
	if err := ensureAll(drv, []alloc{{buf: &mv.sampleIdx, bytes: 4 * k}, {buf: &mv.sampleOut, bytes: 16 * k}}, 0); err != nil {
		return err
	}
	if err := drv.StreamSynchronize(p.stream); err != nil {
		return err
	}
	if err := copyToDevice(drv, &mv.sampleIdx, local); err != nil {
		return err
	}
	if err := drv.Synchronize(); err != nil {
		return err
	}
	if err := p.d.resident.runGather(drv, p.stream, prec(s.is32), mv.sampleIdx.ptr, k, p.lat.ptr, p.lon.ptr, mv.sampleOut.ptr); err != nil {
		return err
	}
	if err := drv.StreamSynchronize(p.stream); err != nil {
		return err
	}
	pairs := make([]float64, 2*k)
	if err := copyFromDevice(drv, pairs, &mv.sampleOut); err != nil {
		return err
	}
	for j := range k {
		s.sample.Pts.Lat64[a+j], s.sample.Pts.Lon64[a+j] = pairs[2*j], pairs[2*j+1]
	}
	return nil
}

// Positions reads the observations and the movers back.
func (s *gpuSession) Positions(ctx context.Context, obsLat, obsLon, refLat, refLon []float64) error {
	if err := engine.CheckPositions(obsLat, obsLon, s.n, refLat, refLon, s.nmov); err != nil {
		return err
	}
	s.g.mu.Lock()
	defer s.g.mu.Unlock()
	if s.closed {
		return errors.New("session: closed")
	}
	return onEach(ctx, s.devices(), func(_ context.Context, k int) error {
		p := s.parts[k]
		if err := p.d.drv.StreamSynchronize(p.stream); err != nil {
			return err
		}
		if obsLat != nil {
			if err := p.readObs(s.is32, obsLat[p.lo:p.hi], obsLon[p.lo:p.hi]); err != nil {
				return err
			}
		}
		if k > 0 || refLat == nil {
			return nil
		}
		return errors.Join(copyFromDevice(p.d.drv, refLat, &p.movers.lat), copyFromDevice(p.d.drv, refLon, &p.movers.lon))
	})
}

// readObs copies the part's observation columns into lat and lon.
func (p *residentPart) readObs(is32 bool, lat, lon []float64) error {
	drv := p.d.drv
	if !is32 {
		return errors.Join(copyFromDevice(drv, lat, &p.lat), copyFromDevice(drv, lon, &p.lon))
	}
	tmp := make([]float32, len(lat))
	for _, c := range []struct {
		dst []float64
		src *buffer
	}{{lat, &p.lat}, {lon, &p.lon}} {
		if err := copyFromDevice(drv, tmp, c.src); err != nil {
			return err
		}
		for i, v := range tmp {
			c.dst[i] = float64(v)
		}
	}
	return nil
}

// copyToDevice copies src to the start of dst. From pageable memory the
// copy may finish after it returns: synchronize the context before a
// stream reads dst.
func copyToDevice[T any](drv *cuda.Driver, dst *buffer, src []T) error {
	var zero T
	bytes := uint64(unsafe.Sizeof(zero)) * uint64(len(src))
	return pinned(src, func(p unsafe.Pointer) error { return drv.MemcpyHtoD(dst.ptr, p, bytes) })
}

// copyFromDevice copies the start of src into dst, synchronously.
func copyFromDevice[T any](drv *cuda.Driver, dst []T, src *buffer) error {
	var zero T
	bytes := uint64(unsafe.Sizeof(zero)) * uint64(len(dst))
	return pinned(dst, func(p unsafe.Pointer) error { return drv.MemcpyDtoH(p, src.ptr, bytes) })
}
