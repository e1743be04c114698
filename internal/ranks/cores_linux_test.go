package ranks

import (
	"testing"

	"golang.org/x/sys/unix"
)

// A process bound to one core (as Open MPI binds a rank) gets its share of
// the node back, on every thread; GEOKNN_MPI_KEEP_BINDING=1 keeps it bound.
func TestWidenBinding(t *testing.T) {
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		t.Skip("no CPU affinity here:", err)
	}
	cpus := nodeCPUs()
	if len(cpus) < 2 || before.Count() < 2 {
		t.Skip("one core here: nothing to widen")
	}
	defer setThreadsAffinity(&before)
	var one unix.CPUSet
	one.Set(cpus[0])
	bind := func() {
		t.Helper()
		if err := setThreadsAffinity(&one); err != nil {
			t.Skip("cannot bind threads here:", err)
		}
	}
	bind()
	t.Setenv(keepBindingEnv, "1")
	if n, _ := widenBinding(0, 1); n != 0 {
		t.Fatalf("with %s=1 the binding was widened to %d cores", keepBindingEnv, n)
	}
	t.Setenv(keepBindingEnv, "")
	n, note := widenBinding(0, 1)
	if n < 2 || note == "" {
		t.Fatalf("a rank alone on a node bound to one core: widened to %d cores (%q)", n, note)
	}
	var now unix.CPUSet
	if err := unix.SchedGetaffinity(0, &now); err != nil || now.Count() != n {
		t.Fatalf("the thread's mask has %d cores, want %d (%v)", now.Count(), n, err)
	}
	bind()
	if n, _ := widenBinding(1, 2); n != 0 && n > len(cpus)-len(cpus)/2 {
		t.Errorf("the second of two ranks got %d cores, more than its share", n)
	}
}
