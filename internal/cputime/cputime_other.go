//go:build !unix

// Package cputime reads the process's CPU time, user and system: what a
// benchmark or a server's request costs on a machine other work shares.
package cputime

import "time"

// Process is the process's CPU time so far; false here, where it is not read.
func Process() (time.Duration, bool) { return 0, false }
