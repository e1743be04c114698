//go:build linux

package worker

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The arrays of a request and of its answer travel in memfd files, mapped
// by both processes: the Python side writes the points (radians, converted
// from the caller's array as they are copied in) and maps the answers as
// NumPy arrays, so each array crosses once and is never copied again.

// lonOffset is where the longitudes of n points start in a points file:
// after the latitudes, at the next multiple of 64 KiB, so that no page
// holds both columns (the GPU driver page-locks each column on its own,
// and refuses two registrations of one page) whatever the page size.
func lonOffset(n int) int { return (8*n + lonAlign - 1) &^ (lonAlign - 1) }

const lonAlign = 64 << 10

// pointsBytes is the size of a points file of n points.
func pointsBytes(n int) int { return lonOffset(n) + 8*n }

// mapPoints maps a request's points: n latitudes, then from lonOffset(n)
// n longitudes, float64 radians, through cache (nil for a fitted set,
// mapped while it lives). release lets go of the mapping once nothing
// reads it.
func mapPoints(cache *mapCache, fd, n int) (lat, lon []float64, release func(), err error) {
	if n <= 0 {
		return nil, nil, func() {}, nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, nil, nil, fmt.Errorf("worker: points: %w", err)
	}
	size := pointsBytes(n)
	if st.Size < int64(size) {
		return nil, nil, nil, fmt.Errorf("worker: points: %d bytes, want %d for %d points", st.Size, size, n)
	}
	// MAP_POPULATE maps every page in one call: the engine's workers would
	// otherwise each take a fault a page. A reused query buffer is mapped
	// writable, never written: the GPU driver page-locks only writable
	// pages (workerIndex.pinQuery).
	prot := unix.PROT_READ
	if cache != nil {
		prot |= unix.PROT_WRITE
	}
	b, release, err := cache.mapFile(fd, size, prot, true)
	if err != nil {
		return nil, nil, nil, err
	}
	lat = unsafe.Slice((*float64)(unsafe.Pointer(&b[0])), n)
	lon = unsafe.Slice((*float64)(unsafe.Pointer(&b[lonOffset(n)])), n)
	return lat, lon, release, nil
}

// arraySpec tells the Python side where an array lies in the answer file.
type arraySpec struct {
	Name   string `json:"name"`
	Dtype  string `json:"dtype"` // NumPy's: "<i8" or "<f8"
	Shape  []int  `json:"shape"`
	Offset int    `json:"offset"`
}

// answerFile is a memfd holding an answer's arrays, mapped for writing:
// one the worker created (own, sent back with the reply), or one the
// request brought (a buffer the Python side reuses once the arrays of an
// earlier answer are gone: its pages exist already, so writing the answer
// costs no page allocation).
type answerFile struct {
	fd      int
	own     bool
	mem     []byte
	release func()
	specs   []arraySpec
}

// newAnswerFile sizes a memfd for arrays of 8-byte elements, each at a
// 64-byte aligned offset: reuse if it is 0 or more (grown when short, its
// mapping kept in cache), else a new one.
func newAnswerFile(specs []arraySpec, reuse int, cache *mapCache) (*answerFile, error) {
	size := 0
	for i := range specs {
		specs[i].Offset = size
		size += (8*elements(specs[i].Shape) + 63) &^ 63
	}
	size = max(size, 64)
	a := &answerFile{fd: reuse, specs: specs}
	if reuse < 0 {
		fd, err := unix.MemfdCreate("geoknn-answers", unix.MFD_CLOEXEC)
		if err != nil {
			return nil, fmt.Errorf("worker: memfd_create: %w", err)
		}
		a.fd, a.own = fd, true
	}
	grew, err := a.grow(size)
	if err != nil {
		a.close()
		return nil, err
	}
	if a.own {
		cache = nil // sent away, never seen again
	}
	// A reused buffer's pages exist: MAP_POPULATE maps them all in one
	// call. New pages are better faulted in by the writers, in parallel.
	a.mem, a.release, err = cache.mapFile(a.fd, size, unix.PROT_READ|unix.PROT_WRITE, !grew)
	if err != nil {
		a.close()
		return nil, err
	}
	return a, nil
}

// grow makes the file at least size bytes (never shorter: the Python side
// may map more of it than this answer uses); grew says it had to.
func (a *answerFile) grow(size int) (grew bool, err error) {
	var st unix.Stat_t
	if err := unix.Fstat(a.fd, &st); err != nil {
		return false, fmt.Errorf("worker: answer buffer: %w", err)
	}
	if st.Size >= int64(size) {
		return false, nil
	}
	if err := unix.Ftruncate(a.fd, int64(size)); err != nil {
		return true, fmt.Errorf("worker: sizing %d bytes of answers: %w", size, err)
	}
	return true, nil
}

func elements(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

func (a *answerFile) int64s(i int) []int64 {
	s := a.specs[i]
	if elements(s.Shape) == 0 {
		return nil // its offset may be the file's end: no byte to point at
	}
	return unsafe.Slice((*int64)(unsafe.Pointer(&a.mem[s.Offset])), elements(s.Shape))
}

func (a *answerFile) float64s(i int) []float64 {
	s := a.specs[i]
	if elements(s.Shape) == 0 {
		return nil
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(&a.mem[s.Offset])), elements(s.Shape))
}

// unmap lets go of the worker's mapping (unless cached); the descriptor
// stays open until close, after it was sent.
func (a *answerFile) unmap() { a.release() }

// close closes the descriptor the worker created (a request's is closed
// with the request).
func (a *answerFile) close() {
	if a.own {
		unix.Close(a.fd)
	}
}

// indexAndMetres writes engine answers as int64 indices (-1 for
// noNeighbour) and float64 metres (+Inf there), on every core: the pages
// of a fresh memfd cost a fault each on first write, shared this way.
func indexAndMetres(index []int64, metres []float64, src []uint32, angle []float32) {
	inParallel(len(src), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if src[i] == noNeighbour {
				index[i], metres[i] = -1, math.Inf(1)
				continue
			}
			index[i], metres[i] = int64(src[i]), float64(angle[i])*earthRadiusMetres
		}
	})
}

// inParallel runs f on GOMAXPROCS contiguous blocks of [0, n).
func inParallel(n int, f func(lo, hi int)) {
	parts := max(1, min(runtime.GOMAXPROCS(0), n/(1<<16)))
	var wg sync.WaitGroup
	for p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(n*p/parts, n*(p+1)/parts)
		}()
	}
	wg.Wait()
}
