package sysmem

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Available returns the bytes of memory available to new allocations:
// the least of Linux's MemAvailable, what the address-space limit
// (ulimit -v, RLIMIT_AS) leaves above the process's virtual size, and
// what its cgroup's memory.max leaves above memory.current. Each limit
// ends the process in its own way (the runtime's fatal out of memory, the
// OOM killer), so each is checked; false where the host says none.
func Available() (uint64, bool) {
	n, ok := memAvailable()
	for _, l := range []func() (uint64, bool){addressSpaceLeft, cgroupLeft} {
		if m, lok := l(); lok && (!ok || m < n) {
			n, ok = m, true
		}
	}
	return n, ok
}

// cgroupLeft is memory.max less memory.current of the process's cgroup
// (v2), false when it has no limit or there is none to read.
func cgroupLeft() (uint64, bool) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0, false
	}
	rel, ok := cgroupPath(string(b))
	if !ok {
		return 0, false
	}
	dir := filepath.Join("/sys/fs/cgroup", rel)
	max, ok := readUint(filepath.Join(dir, "memory.max"))
	if !ok {
		return 0, false
	}
	cur, _ := readUint(filepath.Join(dir, "memory.current"))
	return max - min(cur, max), true
}

// cgroupPath is the v2 ("0::/path") line of /proc/self/cgroup.
func cgroupPath(s string) (string, bool) {
	for _, line := range strings.Split(s, "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok {
			return rest, true
		}
	}
	return "", false
}

// readUint reads a file holding one number ("max": none).
func readUint(path string) (uint64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil
}

// vmSize is the process's virtual size (VmSize of /proc/self/status).
func vmSize() (uint64, bool) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	return parseStatusKB(bufio.NewScanner(f), "VmSize:")
}

// parseStatusKB reads a "Key:  123 kB" line.
func parseStatusKB(sc *bufio.Scanner, key string) (uint64, bool) {
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || f[0] != key {
			continue
		}
		kb, err := strconv.ParseUint(f[1], 10, 64)
		return kb << 10, err == nil
	}
	return 0, false
}
