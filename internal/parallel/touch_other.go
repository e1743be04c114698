//go:build !linux

package parallel

// adviseHuge does nothing where transparent huge pages are not asked for
// by madvise.
func adviseHuge([]byte) {}

// populate cannot back memory ahead of its first write here.
func populate([]byte) bool { return false }
