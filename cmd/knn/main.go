// Command knn finds, for every observation point, the nearest reference
// point by great-circle distance, on the GPUs of this host or on its CPUs.
//
//	knn run --obs 2^27 --ref 2^16                 synthetic points, GPU if present
//	knn run --obs cities.csv --ref airports.csv --out nearest.csv
//	knn devices                                   list the GPUs
//
// Run `knn help` or `knn run --help` for every flag.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
)

const usage = `knn: nearest reference point on the sphere for every observation point.

Usage:
  knn run     [flags]   answer a query (files or synthetic points)
  knn simulate [flags]  move the references and answer the query every step
  knn plot    [flags]   draw the decision regions (PNG, or GIF of a simulation)
  knn devices           list the CUDA GPUs of this host
  knn bench   [flags]   benchmark sweep: sizes, algorithms, engines, GPUs
  knn help [command]    show help

Example:
  knn run --obs cities.csv --ref airports.csv --out nearest.csv
  knn run --obs 2^27 --ref 2^16 --engine gpu --validate 65536
  knn simulate --obs 2^24 --ref 2^16 --steps 100 --dt 60
  knn plot --grid --obs cities.csv --ref airports.csv --png regions.png

Run 'knn run --help' (simulate, plot) for the flags of each command.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, errUsageShown) {
			fmt.Fprintln(os.Stderr, "knn:", err)
		}
		os.Exit(1)
	}
}

// errUsageShown marks an error whose explanation was already printed.
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
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			return run(ctx, []string{args[1], "--help"}, stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

// parseFlags parses a command's flags; on --help it prints usage and the
// flag defaults and reports helped, so the command returns without error.
func parseFlags(fs *flag.FlagSet, usage string, args []string, stderr io.Writer) (helped bool, err error) {
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return true, nil
		}
		return false, errUsageShown
	}
	if fs.NArg() > 0 {
		return false, fmt.Errorf("%s: unexpected argument %q (flags start with --)", fs.Name(), fs.Arg(0))
	}
	return false, nil
}
