package ranks

import (
	"errors"
	"time"

	"github.com/geoknn/geoknn/mpi"
)

// ErrAnotherRank is what a rank reports when another rank failed to
// write its part of the one output.
var ErrAnotherRank = errors.New("another rank failed to write its part of the output (its error is above)")

// ErrAnotherRankAnswers is the same for the ranks' own files (WriteOwn).
var ErrAnotherRankAnswers = errors.New("another rank failed to write its answers")

// abortGrace is how long a rank that need not end the job itself leaves
// the others before MPI_Abort, which kills them at once: time for rank 0
// to remove the job's temporary output (a file, or a folder of step
// files) and for the failing rank to print its error and end the job.
const abortGrace = 2 * time.Second

// Abort ends the whole job with status once a rank failed (err; the
// failure printed by the caller): at once where this rank is the one to
// end it, else after abortGrace (waitsForOthers). It returns only where
// MPI itself is broken.
func Abort(world mpi.Comm, rank int, signalled bool, err error, status int) {
	if waitsForOthers(rank, signalled, err) {
		time.Sleep(abortGrace)
	}
	world.Abort(status)
}

// waitsForOthers tells whether a rank leaves ending the job to another:
// on a signal every rank but 0 (rank 0 removes the temporary output on the
// same signal, maybe while waiting in a collective that never returns),
// and on another rank's failure every rank (that rank aborts once its
// error is printed; rank 0 has removed the output before it got here).
func waitsForOthers(rank int, signalled bool, err error) bool {
	if errors.Is(err, ErrAnotherRank) || errors.Is(err, ErrAnotherRankAnswers) {
		return true
	}
	return signalled && rank > 0
}

// AllOK tells every rank whether every rank's step succeeded: a rank
// that failed gets its own error back, the others ErrAnotherRank.
func AllOK(world mpi.Comm, err error) error {
	failed := 0.0
	if err != nil {
		failed = 1
	}
	anyFailed, rerr := world.MaxFloat64(failed)
	switch {
	case rerr != nil:
		return rerr
	case anyFailed == 0:
		return nil
	case err != nil:
		return err
	}
	return ErrAnotherRank
}

// failedRank is err, or ErrAnotherRank where another rank's value is -1
// (its failure).
func failedRank(vals []int64, err error) error {
	if err != nil {
		return err
	}
	for _, v := range vals {
		if v < 0 {
			return ErrAnotherRank
		}
	}
	return nil
}
