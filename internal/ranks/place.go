package ranks

import (
	"runtime"

	"github.com/geoknn/geoknn/mpi"
)

// Place is where a rank of a job runs, and what it takes of its node.
type Place struct {
	Rank, Size int
	// LocalRank is the rank's place among the LocalLen ranks of its node.
	LocalRank, LocalLen int
	Host                string
	// GPUs are the rank's GPUs from FirstGPU on (0: all of the node's).
	GPUs, FirstGPU int
	// binding says what became of the launcher's binding (widenBinding).
	binding string
}

// Locate learns the rank, the node-local rank and the host, and picks
// the rank's GPUs (perRank of them; 0: one a rank when a node runs
// several ranks, else all) and its share of the node's cores, which it
// takes at once (GOMAXPROCS, and the binding widened where the launcher
// bound it to fewer).
func Locate(lib *mpi.Lib, world mpi.Comm, perRank int) (Place, error) {
	var p Place
	var err error
	if p.Rank, err = world.Rank(); err != nil {
		return p, err
	}
	if p.Size, err = world.Size(); err != nil {
		return p, err
	}
	if p.Host, err = lib.ProcessorName(); err != nil {
		return p, err
	}
	local, err := world.SplitShared()
	if err != nil {
		return p, err
	}
	defer local.Free()
	if p.LocalRank, err = local.Rank(); err != nil {
		return p, err
	}
	if p.LocalLen, err = local.Size(); err != nil {
		return p, err
	}
	if perRank == 0 && p.LocalLen > 1 {
		perRank = 1
	}
	p.GPUs, p.FirstGPU = perRank, p.LocalRank*perRank
	// The node's cores, shared by its ranks.
	cores := runtime.NumCPU() / p.LocalLen
	if n, note := widenBinding(p.LocalRank, p.LocalLen); n > 0 {
		cores, p.binding = n, note
	}
	runtime.GOMAXPROCS(max(1, cores))
	return p, nil
}

// coresNote is what the rank's report line adds about its cores: how
// its binding was widened, or that the launcher's binding was kept short
// of its share; "" when neither.
func (p Place) coresNote() string {
	if p.binding != "" {
		return p.binding
	}
	return boundNote(p.LocalLen)
}

// Start places the rank (Locate) and checks that every rank was started
// with rank 0's settings (SameSettings; cmd names the command), before
// any work.
func Start(lib *mpi.Lib, world mpi.Comm, perRank int, cmd string, settings []Setting) (Place, error) {
	p, err := Locate(lib, world, perRank)
	if err != nil {
		return p, err
	}
	return p, SameSettings(world, p.Rank, cmd, settings)
}
