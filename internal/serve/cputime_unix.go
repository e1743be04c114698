//go:build unix

package serve

import (
	"syscall"
	"time"
)

// processCPU is the process's CPU time so far, user and system: the
// per-request cost a load generator divides it into.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
