// Package sysmem reports how much memory the host can still give a
// process, so that commands refuse sizes that cannot fit before they
// allocate anything (an allocation the runtime cannot satisfy kills the
// process with a stack trace instead of an error).
package sysmem

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// memAvailable is Linux's MemAvailable, false where the host does not
// say.
func memAvailable() (uint64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	return parseMeminfo(bufio.NewScanner(f))
}

// parseMeminfo reads the MemAvailable line ("MemAvailable:  123 kB").
func parseMeminfo(sc *bufio.Scanner) (uint64, bool) {
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || f[0] != "MemAvailable:" {
			continue
		}
		kb, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			return 0, false
		}
		return kb << 10, true
	}
	return 0, false
}
