package serve

import (
	"fmt"
	"math"
	"strconv"
	"sync/atomic"

	"github.com/geoknn/geoknn"
)

// snapshot is one version of the references: immutable once published,
// so that every query answered against it sees one consistent set. Its
// Index is closed when it has been replaced and its last query is done.
type snapshot struct {
	version  uint64
	lat, lon []float64 // radians, never modified after publication
	ids      []string  // nil when the references have no id column
	byID     map[string]uint32
	index    *geoknn.Index

	// refs counts the store's hold and every query's; the last release
	// closes the index, then closed.
	refs   atomic.Int64
	closed chan struct{}
}

// Len is the number of references.
func (s *snapshot) Len() int { return len(s.lat) }

// id is reference i's id: its id column's value, or its index.
func (s *snapshot) id(i uint32) string {
	if s.ids != nil {
		return s.ids[i]
	}
	return strconv.FormatUint(uint64(i), 10)
}

// lookup is the index of the reference named id (by its id column, or by
// its decimal index when there is none).
func (s *snapshot) lookup(id string) (uint32, bool) {
	if s.byID != nil {
		i, ok := s.byID[id]
		return i, ok
	}
	i, err := strconv.ParseUint(id, 10, 32)
	if err != nil || i >= uint64(len(s.lat)) {
		return 0, false
	}
	return uint32(i), true
}

// refStore holds the current snapshot.
type refStore struct {
	cur atomic.Pointer[snapshot]
}

// newSnapshot prepares lat, lon (radians, kept) and ids as version v.
func newSnapshot(v uint64, lat, lon []float64, ids []string, byID map[string]uint32, open func(geoknn.Points) (*geoknn.Index, error)) (*snapshot, error) {
	if len(lat) == 0 {
		return nil, fmt.Errorf("no reference points")
	}
	if ids != nil && len(ids) != len(lat) {
		return nil, fmt.Errorf("%d ids for %d references", len(ids), len(lat))
	}
	if ids != nil && byID == nil {
		byID = make(map[string]uint32, len(ids))
		for i, id := range ids {
			if _, dup := byID[id]; dup {
				return nil, fieldErr("id", fmt.Sprintf("reference id %q given twice: an id names one reference", id))
			}
			byID[id] = uint32(i)
		}
	}
	x, err := open(geoknn.Radians64(lat, lon))
	if err != nil {
		return nil, err
	}
	s := &snapshot{version: v, lat: lat, lon: lon, ids: ids, byID: byID, index: x, closed: make(chan struct{})}
	s.refs.Store(1) // the store's own
	return s, nil
}

// acquire returns the current snapshot, held until release: its Index is
// not closed under a query. It returns nil once the store is closed.
func (r *refStore) acquire() *snapshot {
	for {
		s := r.cur.Load()
		if s == nil {
			return nil
		}
		n := s.refs.Load()
		if n > 0 && s.refs.CompareAndSwap(n, n+1) {
			return s
		}
		// Retired between the load and the count: take the new one.
	}
}

// release drops a hold; the last one closes the retired snapshot's index.
func (s *snapshot) release() {
	if s.refs.Add(-1) == 0 {
		_ = s.index.Close()
		close(s.closed)
	}
}

// publish makes next current; the previous snapshot closes when its last
// query is done.
func (r *refStore) publish(next *snapshot) {
	if prev := r.cur.Swap(next); prev != nil {
		prev.release()
	}
}

// close retires the current snapshot and waits for its queries.
func (r *refStore) close() {
	if s := r.cur.Swap(nil); s != nil {
		s.release()
		<-s.closed
	}
}

// Move is one reference update: the reference named ID moves to
// (LatDeg, LonDeg).
type Move struct {
	ID             string
	LatDeg, LonDeg float64
}

// Update is a batch of moves, or with Replace the whole new set (the
// moves' ids are the new ids; with NoIDs the set has none, and
// references are named by index).
type Update struct {
	Moves   []Move
	Replace bool
	NoIDs   bool
}

// checkDegrees refuses a coordinate off the globe or not a number.
func checkDegrees(i int, lat, lon float64) error {
	switch {
	case math.IsNaN(lat) || lat < -90 || lat > 90:
		return fieldErr("lat", fmt.Sprintf("point %d: latitude %v outside [-90, 90]", i, lat))
	case math.IsNaN(lon) || lon < -180 || lon > 360:
		return fieldErr("lon", fmt.Sprintf("point %d: longitude %v outside [-180, 360]", i, lon))
	}
	return nil
}

const degToRad = math.Pi / 180

// wrapLon takes a longitude in [-180, 360] (0 to 360 is common) into
// [-180, 180], the engine's range.
func wrapLon(deg float64) float64 {
	if deg > 180 {
		return deg - 360
	}
	return deg
}

// working is the next version being assembled from queued updates.
type working struct {
	lat, lon []float64
	ids      []string
	byID     map[string]uint32
}

// fork copies cur's columns (the ids and their map are shared until a
// Replace makes new ones: moves never change them).
func fork(cur *snapshot) *working {
	return &working{lat: append([]float64(nil), cur.lat...), lon: append([]float64(nil), cur.lon...), ids: cur.ids, byID: cur.byID}
}

// apply applies u, or changes nothing and says why.
func (w *working) apply(u Update) error {
	if u.Replace {
		n := len(u.Moves)
		if n == 0 {
			return fieldErr("id", "a replacement needs at least one reference")
		}
		lat, lon := make([]float64, n), make([]float64, n)
		var ids []string
		var byID map[string]uint32
		if !u.NoIDs {
			ids, byID = make([]string, n), make(map[string]uint32, n)
		}
		for i, m := range u.Moves {
			lat[i], lon[i] = m.LatDeg*degToRad, m.LonDeg*degToRad
			if ids != nil {
				if _, dup := byID[m.ID]; dup {
					return fieldErr("id", fmt.Sprintf("reference id %q given twice: an id names one reference", m.ID))
				}
				ids[i], byID[m.ID] = m.ID, uint32(i)
			}
		}
		w.lat, w.lon, w.ids, w.byID = lat, lon, ids, byID
		return nil
	}
	look := snapshot{lat: w.lat, ids: w.ids, byID: w.byID}
	idx := make([]uint32, len(u.Moves))
	for k, m := range u.Moves {
		i, ok := look.lookup(m.ID)
		if !ok {
			return fieldErr("id", fmt.Sprintf("unknown reference id %q (point %d)", m.ID, k))
		}
		idx[k] = i
	}
	for k, m := range u.Moves {
		w.lat[idx[k]], w.lon[idx[k]] = m.LatDeg*degToRad, m.LonDeg*degToRad
	}
	return nil
}
