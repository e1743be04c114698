package gpu

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/index"
	"golang.org/x/sync/errgroup"
)

// hostAllocs are a GPU engine's page-locked host ranges for callers'
// answers (allocated, or registered caller memory): every GPU copies into
// them by DMA, with no staging copy.
type hostAllocs struct {
	mu     sync.Mutex
	bytes  map[unsafe.Pointer]int
	chunks map[unsafe.Pointer][]unsafe.Pointer // registered ranges: their chunks' starts
}

// registerChunk is the size of the pieces RegisterHost pins side by side:
// the kernel pins one range on one thread at about 2.5 GB/s.
const registerChunk = 32 << 20

// RegisterHost page-locks the caller's memory [p, p+bytes) for every GPU,
// in chunks pinned by GOMAXPROCS threads at once, so that answers are
// copied straight into it. The memory must stay alive and unmoved (Go
// memory does) until UnregisterHost.
func (g *GPU) RegisterHost(p unsafe.Pointer, bytes int) error {
	if bytes <= 0 {
		return fmt.Errorf("gpu engine: registering %d host bytes", bytes)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.devs) == 0 {
		return errors.New("gpu engine: closed")
	}
	// Every GPU opens first: memory pinned for queries over large sets is
	// worth every GPU, and a context opened after a registration maps it,
	// slowly (2 x H200, 17 GB registered: GPU 1's context took 0.67 s,
	// against 0.13 s before it).
	if _, err := g.allDevs(); err != nil {
		return err
	}
	var starts []unsafe.Pointer
	for off := 0; off < bytes; off += registerChunk {
		starts = append(starts, unsafe.Add(p, off))
	}
	var mu sync.Mutex
	var done []unsafe.Pointer
	err := g.onChunks(len(starts), func(k int) error {
		n := min(registerChunk, bytes-k*registerChunk)
		if err := g.drv.MemHostRegister(starts[k], uint64(n)); err != nil {
			return err
		}
		mu.Lock()
		done = append(done, starts[k])
		mu.Unlock()
		return nil
	})
	if err != nil {
		return errors.Join(err, g.unregister(done))
	}
	g.host.addChunks(p, bytes, starts)
	return nil
}

// UnregisterHost undoes RegisterHost.
func (g *GPU) UnregisterHost(p unsafe.Pointer) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.devs) == 0 {
		return nil // Close unregistered it
	}
	chunks, ok := g.host.removeChunks(p)
	if !ok {
		return errors.New("gpu engine: UnregisterHost of memory RegisterHost did not take")
	}
	return g.unregister(chunks)
}

func (g *GPU) unregister(chunks []unsafe.Pointer) error {
	return g.onChunks(len(chunks), func(k int) error { return g.drv.MemHostUnregister(chunks[k]) })
}

// onChunks runs fn(k) for k in [0, n) on GOMAXPROCS threads, each with the
// first GPU's context current.
func (g *GPU) onChunks(n int, fn func(k int) error) error {
	var next atomic.Int64
	var eg errgroup.Group
	for range min(n, runtime.GOMAXPROCS(0)) {
		eg.Go(func() error {
			return g.devs[0].onThread(func() error {
				for k := int(next.Add(1) - 1); k < n; k = int(next.Add(1) - 1) {
					if err := fn(k); err != nil {
						return err
					}
				}
				return nil
			})
		})
	}
	return eg.Wait()
}

// AllocHost returns bytes of page-locked host memory that every GPU of the
// engine copies answers straight into, when a Result's slices live there.
// It stays valid until FreeHost or Close.
func (g *GPU) AllocHost(bytes int) (unsafe.Pointer, error) {
	if bytes <= 0 {
		return nil, fmt.Errorf("gpu engine: allocating %d host bytes", bytes)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.devs) == 0 {
		return nil, errors.New("gpu engine: closed")
	}
	if _, err := g.allDevs(); err != nil { // as RegisterHost
		return nil, err
	}
	var p unsafe.Pointer
	err := g.devs[0].onThread(func() error {
		var err error
		p, err = g.drv.MemHostAllocPortable(uint64(bytes))
		return err
	})
	if err != nil {
		return nil, err
	}
	g.host.add(p, bytes)
	return p, nil
}

// FreeHost releases memory from AllocHost.
func (g *GPU) FreeHost(p unsafe.Pointer) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.devs) == 0 {
		return nil // Close freed it
	}
	if g.host.registered(p) || !g.host.remove(p) {
		return errors.New("gpu engine: FreeHost of memory AllocHost did not return")
	}
	return g.devs[0].onThread(func() error { return g.drv.MemFreeHost(p) })
}

func (h *hostAllocs) add(p unsafe.Pointer, bytes int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.bytes == nil {
		h.bytes = map[unsafe.Pointer]int{}
	}
	h.bytes[p] = bytes
}

func (h *hostAllocs) addChunks(p unsafe.Pointer, bytes int, chunks []unsafe.Pointer) {
	h.add(p, bytes)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.chunks == nil {
		h.chunks = map[unsafe.Pointer][]unsafe.Pointer{}
	}
	h.chunks[p] = chunks
}

func (h *hostAllocs) removeChunks(p unsafe.Pointer) ([]unsafe.Pointer, bool) {
	h.mu.Lock()
	chunks, ok := h.chunks[p]
	delete(h.chunks, p)
	h.mu.Unlock()
	return chunks, ok && h.remove(p)
}

func (h *hostAllocs) registered(p unsafe.Pointer) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.chunks[p]
	return ok
}

func (h *hostAllocs) remove(p unsafe.Pointer) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.bytes[p]
	delete(h.bytes, p)
	return ok
}

// holds reports whether [p, p+bytes) lies inside one allocation.
func (h *hostAllocs) holds(p unsafe.Pointer, bytes int) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for base, n := range h.bytes {
		off := uintptr(p) - uintptr(base)
		if uintptr(p) >= uintptr(base) && off+uintptr(bytes) <= uintptr(n) {
			return true
		}
	}
	return false
}

// freeAll frees every allocation (the engine closes).
func (h *hostAllocs) freeAll(drv *cuda.Driver) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var errs []error
	for p := range h.bytes {
		if chunks, ok := h.chunks[p]; ok {
			for _, c := range chunks {
				errs = append(errs, drv.MemHostUnregister(c))
			}
			continue
		}
		errs = append(errs, drv.MemFreeHost(p))
	}
	h.bytes, h.chunks = nil, nil
	return errors.Join(errs...)
}

// pinnedIn reports whether obs's columns live in page-locked memory the
// engine registered, so that jobs copy them in straight from there.
func (g *GPU) pinnedIn(obs index.Points) bool {
	n := obs.Len()
	switch {
	case n == 0 || obs.Gen != nil:
		return false
	case obs.Is32():
		return g.host.holds(unsafe.Pointer(&obs.Lat32[0]), 4*n) && g.host.holds(unsafe.Pointer(&obs.Lon32[0]), 4*n)
	}
	return g.host.holds(unsafe.Pointer(&obs.Lat64[0]), 8*n) && g.host.holds(unsafe.Pointer(&obs.Lon64[0]), 8*n)
}

// pinnedOut reports whether out's slices live in the engine's page-locked
// memory, so that jobs copy answers straight into them.
func (g *GPU) pinnedOut(out engine.Result) bool {
	n := len(out.Index)
	return n > 0 && len(out.Distance) == n &&
		g.host.holds(unsafe.Pointer(&out.Index[0]), 4*n) && g.host.holds(unsafe.Pointer(&out.Distance[0]), 4*n)
}

// hostSpan is a piece of a host range that lies in one registration: at
// p, off bytes from the range's start.
type hostSpan struct {
	p          unsafe.Pointer
	off, bytes int
}

// spans splits [p, p+bytes) where it passes from one chunk RegisterHost
// pinned to the next: the driver refuses a copy that spans two
// registrations (CUDA_ERROR_INVALID_VALUE). A range in one allocation, or
// with h nil, is one span.
func (h *hostAllocs) spans(p unsafe.Pointer, bytes int) []hostSpan {
	whole := []hostSpan{{p: p, bytes: bytes}}
	if h == nil {
		return whole
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for base := range h.chunks {
		start := int(uintptr(p) - uintptr(base))
		if uintptr(p) < uintptr(base) || start+bytes > h.bytes[base] {
			continue
		}
		var out []hostSpan
		for off := 0; off < bytes; {
			n := min(bytes-off, registerChunk-(start+off)%registerChunk)
			out = append(out, hostSpan{p: unsafe.Add(p, off), off: off, bytes: n})
			off += n
		}
		return out
	}
	return whole
}

// copyOut queues the copy of bytes at src on the device to dst, the
// caller's page-locked memory (or the engine's staging, h nil), one copy
// a registration.
func copyOut(drv *cuda.Driver, h *hostAllocs, dst unsafe.Pointer, src cuda.DevicePtr, bytes int, stream cuda.Stream) error {
	for _, sp := range h.spans(dst, bytes) {
		if err := drv.MemcpyDtoHAsync(sp.p, src+cuda.DevicePtr(sp.off), uint64(sp.bytes), stream); err != nil {
			return err
		}
	}
	return nil
}

// copyIn is copyOut's way in: bytes at src, the caller's page-locked
// memory, to dst on the device.
func copyIn(drv *cuda.Driver, h *hostAllocs, dst cuda.DevicePtr, src unsafe.Pointer, bytes int, stream cuda.Stream) error {
	for _, sp := range h.spans(src, bytes) {
		if err := drv.MemcpyHtoDAsync(dst+cuda.DevicePtr(sp.off), sp.p, uint64(sp.bytes), stream); err != nil {
			return err
		}
	}
	return nil
}
