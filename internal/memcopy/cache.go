package memcopy

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// defaultCacheBytes is LastLevelCacheBytes where the system does not say:
// a little under the last-level cache of the GPU hosts measured (300 MiB).
const defaultCacheBytes = 256 << 20

// LastLevelCacheBytes is the size of the CPU's largest cache as Linux
// lists it for CPU 0 (/sys/devices/system/cpu/cpu0/cache), or 256 MiB
// where it cannot be read. Data larger than it cannot stay in cache until
// it is read again: such copies gain from Stream, smaller ones lose. It is
// a guide, not a bound: where the last level is split (AMD's L3, one a
// core complex) it is one part's size, and copies stream from there up.
var LastLevelCacheBytes = sync.OnceValue(func() int {
	return cacheBytesIn("/sys/devices/system/cpu/cpu0/cache")
})

// cacheBytesIn is the largest size any index*/size file under dir gives
// ("32768K", "300M"), or defaultCacheBytes without one.
func cacheBytesIn(dir string) int {
	sizes, _ := filepath.Glob(filepath.Join(dir, "index*", "size"))
	largest := 0
	for _, f := range sizes {
		b, err := os.ReadFile(f)
		if err == nil {
			largest = max(largest, parseCacheSize(strings.TrimSpace(string(b))))
		}
	}
	if largest == 0 {
		return defaultCacheBytes
	}
	return largest
}

// parseCacheSize reads a cache size as sysfs writes it: a count of bytes
// with an optional K, M or G suffix; 0 for anything else.
func parseCacheSize(s string) int {
	unit := 1
	switch {
	case strings.HasSuffix(s, "K"):
		unit, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		unit, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		unit, s = 1<<30, strings.TrimSuffix(s, "G")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0
	}
	return n * unit
}
