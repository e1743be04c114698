package ranks

import "syscall"

// statFree is the space free to an unprivileged user on dir's filesystem.
func statFree(dir string) (uint64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	// Blocks are counted in the fragment size where it is given (statvfs,
	// df); FUSE may report a larger Bsize beside it.
	size := st.Frsize
	if size <= 0 {
		size = st.Bsize
	}
	if size <= 0 {
		return 0, false
	}
	return st.Bavail * uint64(size), true
}
