package ranks

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// keepBindingEnv, set to 1, keeps the launcher's binding of every rank as
// it is (widenBinding does nothing).
const keepBindingEnv = "GEOKNN_MPI_KEEP_BINDING"

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
	online, bound := len(nodeCPUs()), boundCores()
	if online == 0 || bound*localLen >= online {
		return ""
	}
	return fmt.Sprintf("; bound to %d of the node's %d cores by the launcher (mpirun --bind-to none gives every rank its share)", bound, online)
}
