package parallel

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// hugeAlign is the size and alignment of a transparent huge page.
const hugeAlign = 1 << 21

// adviseHuge asks the kernel to back the whole 2 MiB pages inside b with
// transparent huge pages (honoured when the system's setting is "madvise"
// or "always"; refused quietly otherwise).
func adviseHuge(b []byte) {
	if len(b) < 2*hugeAlign {
		return
	}
	start := (uintptrOf(b) + hugeAlign - 1) &^ (hugeAlign - 1)
	off := int(start - uintptrOf(b))
	n := (len(b) - off) &^ (hugeAlign - 1)
	if n > 0 {
		_ = syscall.Madvise(b[off:off+n], syscall.MADV_HUGEPAGE) // advice only: without it the pages are 4 KiB
	}
}

// populate backs b's pages with memory without writing them
// (MADV_POPULATE_WRITE, Linux 5.14 and later), so that it may run beside
// goroutines writing b; false where the kernel cannot, which leaves the
// faults to the first writes.
func populate(b []byte) bool {
	return unix.Madvise(b, unix.MADV_POPULATE_WRITE) == nil
}
