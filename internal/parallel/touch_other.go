//go:build !linux

package parallel

// adviseHuge does nothing where transparent huge pages are not asked for
// by madvise.
func adviseHuge([]byte) {}
