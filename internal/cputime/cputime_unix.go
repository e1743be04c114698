//go:build unix

// Package cputime reads the process's CPU time, user and system: what a
// benchmark or a server's request costs on a machine other work shares.
package cputime

import (
	"syscall"
	"time"
)

// Process is the process's CPU time so far, user and system; false where
// the system does not say.
func Process() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
