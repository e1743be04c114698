package geoknn

import (
	"errors"
	"unsafe"
)

// streamPins page-locks the memory a stream goes round with, the chunks'
// columns and the answers' slices, for the engine's GPUs, so that their
// copies go straight to and from it with no staging copy on the host. A
// range is pinned the second time it is seen: a reader that recycles its
// chunks (Parquet's, five for a GPU stream) gets them pinned once each,
// and one that makes every chunk anew pays no registration for memory
// used once (registering costs about as much as the staging copy it
// saves). On the CPU engine nothing is pinned.
type streamPins struct {
	s *Searcher
	// seen counts the sightings of each range by its address: a plain
	// number, so that a reader's buffer seen once is not kept alive by
	// the count (a reader that makes every chunk anew would otherwise
	// hold every chunk until the stream ends). An address that comes
	// back as new memory counts as a second sighting: pinned once, which
	// is harmless.
	seen   map[uintptr]int
	unpins []func() error
}

func newStreamPins(s *Searcher) *streamPins {
	return &streamPins{s: s, seen: map[uintptr]int{}}
}

// again counts a sighting of the range at p and reports whether it is the
// second, when it is to be pinned.
func (sp *streamPins) again(p unsafe.Pointer) bool {
	if p == nil || !sp.s.pinsHost() {
		return false
	}
	sp.seen[uintptr(p)]++
	return sp.seen[uintptr(p)] == 2
}

// points pins a chunk's radian columns, to their capacity (a later chunk
// in the same columns may be longer).
func (sp *streamPins) points(lat, lon []float64) {
	if cap(lat) == 0 || cap(lon) == 0 || !sp.again(unsafe.Pointer(unsafe.SliceData(lat))) {
		return
	}
	sp.keep(sp.s.Pin(Radians64(lat[:cap(lat)], lon[:cap(lon)])))
}

// answers pins an answer buffer's two slices, to their capacity.
func (sp *streamPins) answers(index []uint32, distanceRad []float32) {
	n := min(cap(index), cap(distanceRad))
	if n == 0 || !sp.again(unsafe.Pointer(unsafe.SliceData(index))) {
		return
	}
	sp.keep(sp.s.pinAnswers(index[:n], distanceRad[:n]))
}

// keep remembers an unpin; a range that could not be pinned is simply
// copied through the staging, as before.
func (sp *streamPins) keep(unpin func() error, err error) {
	if err == nil {
		sp.unpins = append(sp.unpins, unpin)
	}
}

// release unpins every range, once the stream's queries are done.
func (sp *streamPins) release() error {
	var errs []error
	for _, u := range sp.unpins {
		errs = append(errs, u())
	}
	sp.unpins = nil
	return errors.Join(errs...)
}
