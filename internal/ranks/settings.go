package ranks

import (
	"fmt"

	"github.com/geoknn/geoknn/mpi"
)

// Setting is a flag of a command and its value, as text: {"--k", "3"}.
type Setting [2]string

// SettingsError is SameSettings' refusal, which every rank returns alike:
// the job ends with MPI_Finalize, not MPI_Abort, whose kill can lose the
// message.
type SettingsError struct{ msg string }

func (e *SettingsError) Error() string { return e.msg }

// SameSettings compares this rank's settings with rank 0's, which it
// broadcasts, before any work: ranks started with different flags would
// answer different queries (a silently different half), or wait in
// different collectives until killed. The first flag that differs is
// named in a *SettingsError that every rank returns; cmd names the
// command in it.
func SameSettings(world mpi.Comm, rank int, cmd string, mine []Setting) error {
	vals := make([]string, len(mine))
	for k, s := range mine {
		vals[k] = s[1]
	}
	root, err := world.BcastStrings(vals, 0)
	if err != nil {
		return err
	}
	differs := -1.0
	for k, s := range mine {
		if k >= len(root) || root[k] != s[1] {
			differs = float64(k)
			break
		}
	}
	// Every rank learns the verdict, so that all of them end alike.
	first, err := world.MaxFloat64(differs)
	if err != nil || first < 0 {
		return err
	}
	s := mine[int(first)]
	if differs < 0 {
		return &SettingsError{fmt.Sprintf("%s --mpi: ranks were started with different flags: %s differs (rank 0 has %q)", cmd, s[0], root[int(first)])}
	}
	return &SettingsError{fmt.Sprintf("%s --mpi: rank %d has %s %q, rank 0 %s %q: start every rank with the same flags", cmd, rank, s[0], s[1], s[0], root[int(first)])}
}
