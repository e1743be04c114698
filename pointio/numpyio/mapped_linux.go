//go:build linux

package numpyio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"golang.org/x/sys/unix"
)

// mappingOS says whether outputs are mapped here.
const mappingOS = true

// mappedFile writes the first size bytes of a regular file through a
// shared mapping of it, and what lies beyond with WriteAt. Buffered
// writes to one file take its inode lock one at a time, so blocks
// encoded on every core would reach the file one after another; copies
// into a mapping run side by side.
type mappedFile struct {
	f    *os.File
	data []byte
}

// mapFile maps f's first size bytes, after allocating them so that no
// write to the mapping can run out of space (which would come as
// SIGBUS). It returns nil, and no error, where f is not a regular file
// or its file system cannot allocate ahead: the caller writes with
// WriteAt as before.
func mapFile(w io.WriterAt, size int64) (*mappedFile, error) {
	f, ok := w.(*os.File)
	if !ok || size <= 0 || int64(int(size)) != size {
		return nil, nil
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, nil
	}
	if err := unix.Fallocate(int(f.Fd()), 0, 0, size); err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
			return nil, nil
		}
		return nil, fmt.Errorf("allocating %s: %w", f.Name(), err)
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, nil // not mappable here: WriteAt still works
	}
	return &mappedFile{f: f, data: data}, nil
}

// WriteAt copies p into the mapping where it falls inside it. A fault
// there (an I/O error under the mapping) becomes this write's error.
func (m *mappedFile) WriteAt(p []byte, off int64) (n int, err error) {
	if off < 0 || off > int64(len(m.data)) || int64(len(p)) > int64(len(m.data))-off {
		return m.f.WriteAt(p, off)
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			n, err = 0, fmt.Errorf("writing %s through its mapping: %v", m.f.Name(), r)
		}
	}()
	return copy(m.data[off:], p), nil
}

// Close unmaps the file; it may be called again.
func (m *mappedFile) Close() error {
	if m.data == nil {
		return nil
	}
	err := unix.Munmap(m.data)
	m.data = nil
	if err != nil {
		return fmt.Errorf("unmapping %s: %w", m.f.Name(), err)
	}
	return nil
}
