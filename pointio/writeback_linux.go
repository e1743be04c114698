package pointio

import (
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// writebackEvery is how often an output being written has its dirty pages
// sent to the disk.
const writebackEvery = 100 * time.Millisecond

// StartWriteback has the kernel start writing f's dirty pages to the disk
// while the output is still being written (sync_file_range with
// SYNC_FILE_RANGE_WRITE, which waits for nothing it need not), so that the
// Sync before the rename waits only for the last pages rather than for the
// whole file: on a host with hundreds of GB of memory the kernel may
// otherwise keep every page of a large output in the cache until that
// Sync (its write-back starts at a share of memory or after 30 s), and
// the disk idles while the answers are computed. Every
// output file gets it; an MPI rank calls it for its part of the file the
// ranks write together. The returned stop, which may be called more than
// once, ends it and must run before f is closed; errors are left to Sync,
// which reports them.
func StartWriteback(f *os.File) (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	fd := int(f.Fd())
	go func() {
		defer close(stopped)
		tick := time.NewTicker(writebackEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				_ = unix.SyncFileRange(fd, 0, 0, unix.SYNC_FILE_RANGE_WRITE)
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done); <-stopped }) }
}
