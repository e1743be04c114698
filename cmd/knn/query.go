package main

import (
	"context"
	"io"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/pointio/formats"
	"github.com/geoknn/geoknn/stream"
)

// answered is a finished query of any kind as run and run --mpi's rank 0
// finish it (answeredOf).
type answered struct {
	own   table                                          // an MPI rank's rows, for --out-per-rank
	check func(in *runInputs) error                      // validates --validate sampled answers
	write func(in *runInputs, out *formats.Format) error // writes them to --out
}

// answeredOf is the finish of a, whatever its kind: its check (by kind)
// and its write, held whole.
func answeredOf(ctx context.Context, f runFlags, stdout, stderr io.Writer, a *geoknn.Answer) answered {
	return answered{
		check: func(in *runInputs) error { return checkAnswer(ctx, in, f, a) },
		write: func(in *runInputs, out *formats.Format) error {
			w := whole{kind: a.Kind, a: a.Answers(), table: func(lb labels) table { return lb.answer(a) }}
			if a.K != nil {
				w.k = a.K.K
			}
			w.a.Within.KeepUnmatched = f.keepUnmatched // the checks allow it with lists alone
			return w.write(ctx, f.out, out, stdout, stderr, in.labels())
		},
	}
}

// checkAnswer checks f.validate sampled answers of a, by its kind.
func checkAnswer(ctx context.Context, in *runInputs, f runFlags, a *geoknn.Answer) error {
	switch a.Kind {
	case stream.KindNearest:
		return in.validate(ctx, in.log, a.Nearest, f.validate, f.seed)
	case stream.KindKNearest:
		return checkK(ctx, in, f, a.K)
	}
	return checkWithin(ctx, in, f, a.Within)
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
