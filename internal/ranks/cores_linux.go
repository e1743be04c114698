package ranks

import (
	"fmt"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// widenBinding gives this rank its share of the node's cores when the
// launcher bound it to fewer: Open MPI binds each rank to one core by
// default (two ranks or fewer a node), which left a rank's reading,
// encoding and copies one core, and `mpirun -np 2` 2.7x slower than one
// process. The share is the localRank-th of localLen equal blocks of the
// cores the process may use. It returns the cores the rank now has (0:
// left as it was) and a note for the rank's report.
//
// Every thread of the process is moved, twice (a thread the runtime makes
// meanwhile inherits its maker's mask); threads made later inherit the
// new mask. The rank keeps the launcher's binding when GEOKNN_MPI_KEEP_BINDING=1 or where
// the cores cannot be read or set.
func widenBinding(localRank, localLen int) (cores int, note string) {
	if os.Getenv(keepBindingEnv) == "1" || localLen < 1 || localRank < 0 || localRank >= localLen {
		return 0, ""
	}
	var now unix.CPUSet
	if err := unix.SchedGetaffinity(0, &now); err != nil {
		return 0, ""
	}
	share := rankShare(nodeCPUs(), localRank, localLen)
	if len(share) <= now.Count() {
		return 0, ""
	}
	var set unix.CPUSet
	for _, c := range share {
		set.Set(c)
	}
	for range 2 {
		if err := setThreadsAffinity(&set); err != nil {
			return 0, fmt.Sprintf("; bound to %d of the node's cores by the launcher, and could not widen it: %v", now.Count(), err)
		}
	}
	var got unix.CPUSet
	if err := unix.SchedGetaffinity(0, &got); err != nil || got.Count() <= now.Count() {
		return 0, ""
	}
	return got.Count(), fmt.Sprintf("; the launcher bound it to %d core(s), widened to its share, %d (%s=1 keeps the binding)",
		now.Count(), got.Count(), keepBindingEnv)
}

// setThreadsAffinity sets the mask of every thread of the process.
func setThreadsAffinity(set *unix.CPUSet) error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		// A thread that ended since the listing is no error.
		if err := unix.SchedSetaffinity(tid, set); err != nil && err != unix.ESRCH {
			return err
		}
	}
	return nil
}

// boundCores is the cores the process is bound to.
func boundCores() int {
	var now unix.CPUSet
	if unix.SchedGetaffinity(0, &now) != nil {
		return runtime.NumCPU()
	}
	return now.Count()
}
