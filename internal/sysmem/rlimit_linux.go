//go:build linux

package sysmem

import "syscall"

// addressSpaceLeft is what RLIMIT_AS leaves above the process's virtual
// size, false when unlimited.
func addressSpaceLeft() (uint64, bool) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &r); err != nil || r.Cur == ^uint64(0) {
		return 0, false
	}
	used, ok := vmSize()
	if !ok {
		return 0, false
	}
	return uint64(r.Cur) - min(used, uint64(r.Cur)), true
}
