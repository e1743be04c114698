package main

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

// mapPoints maps a request's points: n latitudes then n longitudes,
// float64 radians. unmap releases the mapping once nothing reads it.
func mapPoints(fd, n int) (lat, lon []float64, unmap func(), err error) {
	if n <= 0 {
		return nil, nil, func() {}, nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, nil, nil, fmt.Errorf("worker: points: %w", err)
	}
	if st.Size < int64(16*n) {
		return nil, nil, nil, fmt.Errorf("worker: points: %d bytes, want %d for %d points", st.Size, 16*n, n)
	}
	b, err := unix.Mmap(fd, 0, 16*n, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("worker: mapping points: %w", err)
	}
	all := unsafe.Slice((*float64)(unsafe.Pointer(&b[0])), 2*n)
	return all[:n:n], all[n:], func() { unix.Munmap(b) }, nil
}

// arraySpec tells the Python side where an array lies in the answer file.
type arraySpec struct {
	Name   string `json:"name"`
	Dtype  string `json:"dtype"` // NumPy's: "<i8" or "<f8"
	Shape  []int  `json:"shape"`
	Offset int    `json:"offset"`
}

// answerFile is a memfd holding an answer's arrays, mapped for writing.
type answerFile struct {
	fd    int
	mem   []byte
	specs []arraySpec
}

// newAnswerFile creates a memfd sized for arrays of 8-byte elements, each
// at a 64-byte aligned offset.
func newAnswerFile(specs []arraySpec) (*answerFile, error) {
	size := 0
	for i := range specs {
		specs[i].Offset = size
		size += (8*elements(specs[i].Shape) + 63) &^ 63
	}
	fd, err := unix.MemfdCreate("geoknn-answers", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("worker: memfd_create: %w", err)
	}
	size = max(size, 64)
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("worker: sizing %d bytes of answers: %w", size, err)
	}
	mem, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("worker: mapping %d bytes of answers: %w", size, err)
	}
	return &answerFile{fd: fd, mem: mem, specs: specs}, nil
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
	return unsafe.Slice((*int64)(unsafe.Pointer(&a.mem[s.Offset])), elements(s.Shape))
}

func (a *answerFile) float64s(i int) []float64 {
	s := a.specs[i]
	return unsafe.Slice((*float64)(unsafe.Pointer(&a.mem[s.Offset])), elements(s.Shape))
}

// unmap lets go of the worker's mapping; the descriptor stays open until
// close, after it was sent.
func (a *answerFile) unmap() { unix.Munmap(a.mem) }

func (a *answerFile) close() { unix.Close(a.fd) }

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
