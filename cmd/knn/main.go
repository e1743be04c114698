// Command knn finds, for every observation point, the nearest reference
// point by great-circle distance, on the GPUs of this host or on its CPUs.
//
//	knn run --obs 2^27 --ref 2^16                 synthetic points, GPU if present
//	knn run --obs cities.csv --ref airports.csv --out nearest.csv
//	knn devices                                   list the GPUs
//
// Run `knn help` or `knn help run` for every flag.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/geoknn/geoknn"
)

const usage = `knn: nearest reference point on the sphere for every observation point.

Usage:
  knn run     [flags]   answer a query (files or synthetic points)
  knn simulate [flags]  move the references and answer the query every step
  knn plot    [flags]   draw the decision regions (PNG, or GIF of a simulation)
  knn convert IN OUT    convert a file of points (CSV, GeoJSON, Parquet, Arrow, NumPy)
  knn devices           list the CUDA GPUs of this host
  knn serve             keep references resident and answer queries over HTTP (docs/serve.md)
  knn bench   [flags]   benchmark sweep: sizes, algorithms, engines, GPUs
  knn version           print the version, commit, Go release and CUDA driver
  knn help [command]    show help

Example:
  knn run --obs cities.csv --ref airports.csv --out nearest.csv
  knn run --obs 2^27 --ref 2^16 --engine gpu --validate 65536
  knn simulate --obs 2^24 --ref 2^16 --steps 100 --dt 60
  knn plot --grid --obs cities.csv --ref airports.csv --png regions.png

Run 'knn help COMMAND' (run, simulate, plot, ...) for the flags of each command.
`

func main() {
	os.Exit(mainExit(os.Args[1:], os.Stdout, os.Stderr))
}

// mainExit runs the command line and returns the exit status: 0 done
// (help included), 1 a runtime error, 2 a usage error, 128 + the signal
// when SIGINT, SIGTERM, SIGHUP or SIGQUIT stopped it. A signal cancels
// the run's context: every phase (loading, the query, validating,
// writing) stops within about a second, removes its temporary files and
// frees the GPUs' memory.
func mainExit(args []string, stdout, stderr io.Writer) (status int) {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, stopSignalsFor(args)...)
	defer signal.Stop(sigs)
	var got atomic.Value
	go func() {
		if s, ok := <-sigs; ok {
			got.Store(s)
			// A second Ctrl-C gets the default action: the impatient user
			// can always kill a run that cleans up too slowly.
			signal.Stop(sigs)
			cancel(stoppedBy{s.(syscall.Signal)})
		}
	}()
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "knn: internal error (please report it): %v\n", p)
			status = 1
		}
	}()
	err := run(ctx, args, stdout, stderr)
	if s, ok := got.Load().(os.Signal); ok && err != nil {
		if !errors.Is(err, context.Canceled) && !errors.Is(err, errUsageShown) {
			fmt.Fprintln(stderr, "knn:", err)
		}
		fmt.Fprintf(stderr, "knn: stopped by %s\n", signalName(s))
		return 128 + int(s.(syscall.Signal))
	}
	return exitStatus(err, stderr)
}

// stoppedBy is the cause of a context cancelled by a signal: what a rank
// of an MPI job passes on as its exit status (128 + the signal), so that
// every rank and mpirun end as one process would.
type stoppedBy struct{ sig syscall.Signal }

func (s stoppedBy) Error() string { return "stopped by " + signalName(s.sig) }

// signalStatus is the exit status of a run stopped by the signal that
// cancelled ctx, if one did.
func signalStatus(ctx context.Context) (int, bool) {
	var s stoppedBy
	if errors.As(context.Cause(ctx), &s) {
		return 128 + int(s.sig), true
	}
	return 0, false
}

// exitStatus prints err, unless its explanation was shown already, and
// returns its exit status.
func exitStatus(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	if !errors.Is(err, errUsageShown) {
		fmt.Fprintln(stderr, "knn:", err)
	}
	if errors.Is(err, geoknn.ErrNoDriver) || errors.Is(err, geoknn.ErrNoGPU) {
		fmt.Fprintln(stderr, "knn: hint: --engine gpu needs a CUDA GPU; drop it (or give --engine cpu) to run on this host's CPU")
	}
	var u usageError
	if errors.As(err, &u) || errors.Is(err, errUsageShown) {
		return 2
	}
	return 1
}

// usageError is a mistake in the command line (exit status 2).
type usageError struct{ error }

func (u usageError) Unwrap() error { return u.error }

// usagef formats a usageError.
func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// errUsageShown marks a usage error whose explanation was already printed.
var errUsageShown = errors.New("usage shown")

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsageShown
	}
	switch args[0] {
	case "run":
		return cmdRun(ctx, args[1:], stdout, stderr)
	case "simulate":
		return cmdSimulate(ctx, args[1:], stdout, stderr)
	case "plot":
		return cmdPlot(ctx, args[1:], stdout, stderr)
	case "devices":
		return cmdDevices(args[1:], stdout, stderr)
	case "bench":
		return cmdBench(ctx, args[1:], stdout, stderr)
	case "worker":
		return cmdWorker(ctx, args[1:], stdout, stderr)
	case "convert":
		return cmdConvert(ctx, args[1:], stdout, stderr)
	case "serve":
		return cmdServe(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-version":
		return cmdVersion(stdout)
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			return run(ctx, []string{args[1], "--help"}, stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return nil
	}
	return usagef("unknown command %q%s\nknn: see 'knn help' for the commands", args[0], didYouMeanCommand(args[0]))
}

// parseFlags parses a command's flags; on --help it prints usage and the
// flag defaults to stdout and reports helped, so the command returns
// without error. A bad flag, or an argument that is not a flag, is a usage
// error: its message and the usage go to stderr.
func parseFlags(fs *flag.FlagSet, usage string, args []string, stdout, stderr io.Writer) (helped bool, err error) {
	files, helped, err := parseFlagsAndFiles(fs, usage, args, stdout, stderr)
	if err == nil && !helped && len(files) > 0 {
		return false, usagef("%s: unexpected argument %q (flags start with --)\nknn: see 'knn help %s' for every flag", fs.Name(), files[0], fs.Name())
	}
	return helped, err
}

// parseFlagsAndFiles is parseFlags for commands that take file arguments
// too, before, between or after the flags: it returns them in order.
func parseFlagsAndFiles(fs *flag.FlagSet, usage string, args []string, stdout, stderr io.Writer) (files []string, helped bool, err error) {
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fs.SetOutput(stdout)
			fmt.Fprint(stdout, usage)
			fs.PrintDefaults()
			return nil, true, nil
		}
	}
	quietFlagSet(fs)
	// The flag package stops at the first non-flag: parse on after it.
	for err := fs.Parse(args); ; err = fs.Parse(fs.Args()[1:]) {
		if err != nil {
			return nil, false, flagError(fs, err)
		}
		if fs.NArg() == 0 {
			return files, false, nil
		}
		files = append(files, fs.Arg(0))
	}
}
