//go:build unix

package arrowio

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has taken, user and system: on a
// shared machine, what a benchmark costs whatever else runs.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
