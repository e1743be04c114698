package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/geoknn/geoknn"
)

// answered is a finished query of one kind (nearest, k nearest, within a
// radius) as run and run --mpi's rank 0 finish it: one path a kind, built
// by nearestAnswered, kAnswered and withinAnswered.
type answered struct {
	own   table                                    // an MPI rank's rows, for --out-per-rank
	check func(in *runInputs) error                // validates --validate sampled answers
	write func(in *runInputs, format string) error // writes them to --out
}

// nearestAnswered is the nearest query's finish over res.
func nearestAnswered(ctx context.Context, f runFlags, stdout, stderr io.Writer, res *geoknn.Result) answered {
	return answered{
		check: func(in *runInputs) error { return in.validate(ctx, in.log, res, f.validate, f.seed) },
		write: func(in *runInputs, format string) error {
			return writeRunAnswers(ctx, f.out, format, stdout, stderr, res, in.labels())
		},
	}
}

// kAnswered is the k-nearest query's finish over res.
func kAnswered(ctx context.Context, f runFlags, stdout, stderr io.Writer, res *geoknn.KResult) answered {
	return answered{
		check: func(in *runInputs) error { return checkK(ctx, in, f, res) },
		write: func(in *runInputs, format string) error {
			lb := in.labels()
			return wroteNeighbours(stderr, f.out, format, func() error {
				return writeNeighbours(ctx, f.out, stdout, format, lb.kNearest(res), kWriter(res), lb)
			})
		},
	}
}

// withinAnswered is the radius query's finish over res.
func withinAnswered(ctx context.Context, f runFlags, stdout, stderr io.Writer, res *geoknn.WithinResult) answered {
	return answered{
		check: func(in *runInputs) error { return checkWithin(ctx, in, f, res) },
		write: func(in *runInputs, format string) error {
			lb := in.labels()
			return wroteNeighbours(stderr, f.out, format, func() error {
				return writeNeighbours(ctx, f.out, stdout, format, lb.within(res), withinWriter(res, f.keepUnmatched), lb)
			})
		},
	}
}

// wroteNeighbours runs write and says what it wrote, as knn run does for
// the nearest (writeRunAnswers).
func wroteNeighbours(stderr io.Writer, out, format string, write func() error) error {
	t := time.Now()
	if err := write(); err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	fmt.Fprintf(stderr, "wrote %s (%s) in %.3f s\n", describeOut(out), format, time.Since(t).Seconds())
	return nil
}

// finish validates and writes a's answers where the flags ask, each a
// stage of the trace.
func (a answered) finish(in *runInputs, f runFlags) error {
	if f.validate > 0 {
		end := in.trace.Begin("host", "validate")
		err := a.check(in)
		end()
		if err != nil {
			return err
		}
	}
	if f.out == "" {
		return nil
	}
	format, err := f.format() // checked before the work
	if err != nil {
		return err
	}
	end := in.trace.Begin("host", "write")
	defer end()
	return a.write(in, format)
}

// querySummary says what a neighbour query asked, in the flags' units:
// metres, and the k the user asked for (not the one more --exclude-self
// asks of the engine).
func (f runFlags) querySummary(nref int) string {
	self := ""
	if f.excludeSelf {
		self = ", each observation's own left out"
	}
	if f.withinM > 0 {
		return fmt.Sprintf("within %g m of %d references%s", f.withinM, nref, self)
	}
	limit := ""
	if f.maxM > 0 {
		limit = fmt.Sprintf(" within %g m", f.maxM)
	}
	return fmt.Sprintf("%d nearest%s of %d references%s", f.k, limit, nref, self)
}
