//go:build linux

package main

import (
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
