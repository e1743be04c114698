//go:build !linux

package ranks

import "runtime"

// widenBinding leaves the rank as the launcher started it: binding a
// process's threads to cores is Linux's (sched_setaffinity) here.
func widenBinding(localRank, localLen int) (cores int, note string) { return 0, "" }

// boundCores is the cores the process may run on.
func boundCores() int { return runtime.NumCPU() }
