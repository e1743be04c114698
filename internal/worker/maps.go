//go:build linux

package worker

import (
	"fmt"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapCache keeps the worker's mappings of the buffers the Python side
// reuses (its query buffer, its answer buffers), so that a reused buffer
// costs no mapping: building and tearing down the page tables of 256 MiB
// cost tens of milliseconds a query. A buffer is known by its device and
// inode; a cached mapping keeps its memfd alive, so the number cannot name
// another file meanwhile. Few mappings are kept, none over
// maxCachedMapBytes: one the Python side has let go holds its memory only
// until newer ones push it out.
type mapCache struct {
	entries []cachedMap // most recent first
	max     int
	// onDrop, if set, is called with a cached mapping before it is
	// unmapped (to undo its page-locking for GPUs).
	onDrop func(mem []byte)
}

type cachedMap struct {
	dev, ino uint64
	prot     int
	mem      []byte
}

// maxCachedMapBytes matches the Python side's largest pooled buffer.
const maxCachedMapBytes = 1 << 30

// mapFile maps size bytes of fd, shared, with prot; populate maps every
// page up front. release undoes the mapping unless the cache keeps it. A
// nil cache keeps nothing.
func (c *mapCache) mapFile(fd, size, prot int, populate bool) (mem []byte, release func(), err error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, nil, fmt.Errorf("worker: buffer: %w", err)
	}
	if m := c.find(st, prot, size); m != nil {
		return m[:size], func() {}, nil
	}
	flags := unix.MAP_SHARED
	if populate {
		flags |= unix.MAP_POPULATE
	}
	if mem, err = unix.Mmap(fd, 0, size, prot, flags); err != nil {
		return nil, nil, fmt.Errorf("worker: mapping %d bytes: %w", size, err)
	}
	if c == nil || size > maxCachedMapBytes {
		return mem, func() { unix.Munmap(mem) }, nil
	}
	c.add(cachedMap{dev: st.Dev, ino: st.Ino, prot: prot, mem: mem})
	return mem, func() {}, nil
}

// find returns a cached mapping of the file of at least size bytes, made
// the most recent, or nil.
func (c *mapCache) find(st unix.Stat_t, prot, size int) []byte {
	if c == nil {
		return nil
	}
	for i, e := range c.entries {
		if e.dev == st.Dev && e.ino == st.Ino && e.prot == prot && len(e.mem) >= size {
			c.entries = slices.Insert(slices.Delete(c.entries, i, i+1), 0, e)
			return e.mem
		}
	}
	return nil
}

// add keeps e, dropping a shorter mapping of the same file and the
// oldest beyond max.
func (c *mapCache) add(e cachedMap) {
	c.entries = slices.DeleteFunc(c.entries, func(o cachedMap) bool {
		stale := o.dev == e.dev && o.ino == e.ino && o.prot == e.prot
		if stale {
			c.unmap(o.mem)
		}
		return stale
	})
	c.entries = slices.Insert(c.entries, 0, e)
	for len(c.entries) > c.max {
		c.unmap(c.entries[len(c.entries)-1].mem)
		c.entries = c.entries[:len(c.entries)-1]
	}
}

func (c *mapCache) unmap(mem []byte) {
	if c.onDrop != nil {
		c.onDrop(mem)
	}
	unix.Munmap(mem)
}

// cached reports whether p starts a mapping the cache keeps (and hands
// to onDrop before it unmaps it).
func (c *mapCache) cached(p unsafe.Pointer) bool {
	if c == nil {
		return false
	}
	for _, e := range c.entries {
		if unsafe.Pointer(&e.mem[0]) == p {
			return true
		}
	}
	return false
}

// close undoes every cached mapping.
func (c *mapCache) close() {
	for _, e := range c.entries {
		c.unmap(e.mem)
	}
	c.entries = nil
}
