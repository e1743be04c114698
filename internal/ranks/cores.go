package ranks

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// keepBindingEnv, set to 1, keeps the launcher's binding of every rank as
// it is (widenBinding does nothing).
const keepBindingEnv = "GEOKNN_MPI_KEEP_BINDING"

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

// rankShare is the localRank-th of localLen equal blocks of cpus (the
// last block takes the remainder).
func rankShare(cpus []int, localRank, localLen int) []int {
	per := len(cpus) / localLen
	if per == 0 {
		return nil
	}
	hi := (localRank + 1) * per
	if localRank == localLen-1 {
		hi = len(cpus)
	}
	return cpus[localRank*per : hi]
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

// nodeCPUs is the cores the process may use on this node: its cgroup's
// cpuset where one is set, else the online cores.
func nodeCPUs() []int {
	for _, f := range []string{"/sys/fs/cgroup/cpuset.cpus.effective", "/sys/devices/system/cpu/online"} {
		if b, err := os.ReadFile(f); err == nil {
			if cpus := parseCPUList(string(b)); len(cpus) > 0 {
				return cpus
			}
		}
	}
	return nil
}

// parseCPUList reads Linux's CPU list format ("0-31,40,42-43"); nil when
// it is not one.
func parseCPUList(s string) []int {
	var cpus []int
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		z, err2 := strconv.Atoi(hi)
		switch {
		case err1 != nil || a < 0:
			return nil
		case !isRange:
			z = a
		case err2 != nil || z < a:
			return nil
		}
		for c := a; c <= z; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

// boundNote is what a rank's report adds when the launcher bound the rank
// to fewer cores than its share of the node's (localLen ranks share it)
// and it was kept so.
func boundNote(localLen int) string {
	online, bound := len(nodeCPUs()), runtime.NumCPU()
	var now unix.CPUSet
	if unix.SchedGetaffinity(0, &now) == nil {
		bound = now.Count()
	}
	if online == 0 || bound*localLen >= online {
		return ""
	}
	return fmt.Sprintf("; bound to %d of the node's %d cores by the launcher (mpirun --bind-to none gives every rank its share)", bound, online)
}
