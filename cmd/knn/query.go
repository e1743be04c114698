package main

import (
	"context"
	"fmt"
	"io"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/pointio/formats"
	"github.com/geoknn/geoknn/stream"
)

// answered is a finished query of one kind (nearest, k nearest, within a
// radius) as run and run --mpi's rank 0 finish it: one path a kind, built
// by nearestAnswered, kAnswered and withinAnswered.
type answered struct {
	own   table                                          // an MPI rank's rows, for --out-per-rank
	check func(in *runInputs) error                      // validates --validate sampled answers
	write func(in *runInputs, out *formats.Format) error // writes them to --out
}

// nearestAnswered is the nearest query's finish over res.
func nearestAnswered(ctx context.Context, f runFlags, stdout, stderr io.Writer, res *geoknn.Result) answered {
	return answered{
		check: func(in *runInputs) error { return in.validate(ctx, in.log, res, f.validate, f.seed) },
		write: func(in *runInputs, out *formats.Format) error {
			w := whole{kind: stream.KindNearest, a: res.Answers(), table: func(lb labels) table { return lb.nearest(res) }}
			return w.write(ctx, f.out, out, stdout, stderr, in.labels())
		},
	}
}

// kAnswered is the k-nearest query's finish over res.
func kAnswered(ctx context.Context, f runFlags, stdout, stderr io.Writer, res *geoknn.KResult) answered {
	return answered{
		check: func(in *runInputs) error { return checkK(ctx, in, f, res) },
		write: func(in *runInputs, out *formats.Format) error {
			w := whole{kind: stream.KindKNearest, k: res.K, a: res.Answers(), table: func(lb labels) table { return lb.kNearest(res) }}
			return w.write(ctx, f.out, out, stdout, stderr, in.labels())
		},
	}
}

// withinAnswered is the radius query's finish over res.
func withinAnswered(ctx context.Context, f runFlags, stdout, stderr io.Writer, res *geoknn.WithinResult) answered {
	return answered{
		check: func(in *runInputs) error { return checkWithin(ctx, in, f, res) },
		write: func(in *runInputs, out *formats.Format) error {
			w := whole{kind: stream.KindWithinCounts, a: res.Answers(), table: func(lb labels) table { return lb.within(res) }}
			if res.Offsets != nil {
				w.kind = stream.KindWithinLists
			}
			w.a.Within.KeepUnmatched = f.keepUnmatched
			return w.write(ctx, f.out, out, stdout, stderr, in.labels())
		},
	}
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
	out, err := f.output() // checked before the work
	if err != nil {
		return err
	}
	end := in.trace.Begin("host", "write")
	defer end()
	return a.write(in, out)
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
