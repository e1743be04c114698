package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// boundNote is what a rank's report adds when the launcher bound the rank
// to fewer cores than its share of the node's (localLen ranks share it):
// Open MPI binds each rank to one core by default (two ranks or fewer),
// which leaves a rank's encoding, copies and CPU engine one core.
func boundNote(localLen int) string {
	online, bound := onlineCPUs(), runtime.NumCPU()
	if online == 0 || bound*localLen >= online {
		return ""
	}
	return fmt.Sprintf("; bound to %d of the node's %d cores by the launcher (mpirun --bind-to none gives every rank its share)", bound, online)
}

// onlineCPUs is the host's online CPU count (Linux's
// /sys/devices/system/cpu/online, "0-31,40"), 0 where unknown.
func onlineCPUs() int {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return 0
	}
	n := 0
	for _, part := range strings.Split(strings.TrimSpace(string(b)), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		z, err2 := strconv.Atoi(hi)
		switch {
		case err1 != nil:
			return 0
		case !isRange:
			n++
		case err2 != nil || z < a:
			return 0
		default:
			n += z - a + 1
		}
	}
	return n
}
