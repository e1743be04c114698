package ranks

import (
	"errors"
	"runtime"

	"github.com/geoknn/geoknn/mpi"
)

// Run runs one rank of a job on this goroutine, locked to its thread for
// MPI_THREAD_FUNNELED: the MPI library opened and initialised, then run,
// then the rank ended. After success, or a *SettingsError (which every
// rank returns alike), MPI_Finalize, and run's error is returned; after
// any other error, failed (the caller's words for it, printed) gives the
// exit status and whether a signal stopped the rank, and MPI_Abort ends
// the whole job (Abort): Run returns only where MPI itself is broken.
func Run(run func(lib *mpi.Lib, world mpi.Comm) (Place, error), failed func(p Place, err error) (status int, signalled bool)) (Place, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	lib, err := mpi.Open()
	if err != nil {
		return Place{}, err
	}
	world, err := lib.Init()
	if err != nil {
		return Place{}, err
	}
	p, err := run(lib, world)
	var se *SettingsError
	if errors.As(err, &se) {
		lib.Finalize()
		return p, err
	}
	if err == nil {
		return p, lib.Finalize()
	}
	status, signalled := failed(p, err)
	Abort(world, p.Rank, signalled, err, status)
	return p, err
}
