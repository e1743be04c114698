//go:build linux

package worker

import (
	"context"
	"slices"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

func memfdOf(t *testing.T, size int) int {
	t.Helper()
	fd, err := unix.MemfdCreate("test-cache", unix.MFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

// TestMapCache checks that a reused buffer keeps its mapping, that a
// grown one is mapped again, and that the oldest mapping goes first.
func TestMapCache(t *testing.T) {
	var dropped [][]byte
	c := &mapCache{max: 2, onDrop: func(mem []byte) { dropped = append(dropped, mem) }}
	defer c.close()
	rw := unix.PROT_READ | unix.PROT_WRITE
	a := memfdOf(t, 1<<16)
	m1, _, err := c.mapFile(a, 1<<16, rw, true)
	if err != nil {
		t.Fatal(err)
	}
	m2, _, _ := c.mapFile(a, 1<<12, rw, true)
	if &m1[0] != &m2[0] {
		t.Error("a reused buffer was mapped again")
	}
	unix.Ftruncate(a, 1<<17)
	m3, _, _ := c.mapFile(a, 1<<17, rw, true)
	if len(c.entries) != 1 || len(m3) != 1<<17 {
		t.Errorf("grown buffer: %d entries, %d bytes mapped", len(c.entries), len(m3))
	}
	m3[5] = 7
	// Every mapping the cache lets go of is handed to onDrop first (the
	// worker unpins it there).
	if len(dropped) != 1 || &dropped[0][0] != &m1[0] || !c.cached(unsafe.Pointer(&m3[0])) {
		t.Errorf("grown buffer: %d mappings dropped, the new one cached %v", len(dropped), c.cached(unsafe.Pointer(&m3[0])))
	}
	b, d := memfdOf(t, 4096), memfdOf(t, 4096)
	c.mapFile(b, 4096, rw, true)
	c.mapFile(d, 4096, rw, true)
	if len(c.entries) != 2 {
		t.Fatalf("%d entries, want 2", len(c.entries))
	}
	m4, _, _ := c.mapFile(a, 1<<17, rw, true)
	if m4[5] != 7 || len(c.entries) != 2 {
		t.Errorf("the oldest was not pushed out, or a's pages changed: %d entries, byte %d", len(c.entries), m4[5])
	}
	if len(dropped) != 3 {
		t.Errorf("%d mappings dropped, want 3 (a's first, a's, b's)", len(dropped))
	}
}

// TestWorkerPinBookkeeping follows the pins of a buffer queried twice
// alike (on the CPU engine pinning does nothing, so the bookkeeping alone
// is tested here; the GPU run tests the driver's part): the points are
// pinned for their size, pinned again for another, and unpinned when the
// cache drops the buffer.
func TestWorkerPinBookkeeping(t *testing.T) {
	lat, lon := make([]float64, 1000), make([]float64, 1000)
	for i := range lat {
		lat[i], lon[i] = float64(i)/1000, float64(i)/500
	}
	x, err := newWorkerIndex(lat[:300], lon[:300], "cpu", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer x.close()
	if _, _, err := x.nearest(context.Background(), lat, lon, true); err != nil {
		t.Fatal(err)
	}
	if pins := x.pinNearest(lat, lon, true); !slices.Equal(pins.pinned, []string{"points", "answers"}) || pins.err != nil {
		t.Fatalf("pinned %v (%v), want points and answers", pins.pinned, pins.err)
	}
	x.pinNearest(lat[:500], lon[:500], true)
	p := unsafe.Pointer(&lat[0])
	if len(x.pins) != 1 || x.pins[p].n != 500 || x.resPinned != 1000 {
		t.Errorf("pins %v, result pinned for %d", x.pins, x.resPinned)
	}
	w := &worker{indexes: map[int]*fitted{1: {workerIndex: x}}}
	w.unpinBuffer(unsafe.Slice((*byte)(p), 8))
	if len(x.pins) != 0 {
		t.Errorf("the dropped buffer is still pinned: %v", x.pins)
	}
}
