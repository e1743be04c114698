package main

import (
	"context"
	"errors"
	"flag"
	"io"

	"github.com/geoknn/geoknn/internal/worker"
)

const workerUsage = `knn worker: serve queries to the geoknn Python package.

Usage:
  knn worker

The geoknn Python package starts it with a unix SOCK_SEQPACKET socket as
stdin and sends it JSON requests with memfd descriptors holding the arrays;
it exits when the socket closes. It is not meant to be run by hand.
`

// cmdWorker parses the (absent) flags and hands stdin to the worker; a
// stdin that is not its socket is a usage error (exit status 2).
func cmdWorker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	if helped, err := parseFlags(fs, workerUsage, args, stdout, stderr); helped || err != nil {
		return err
	}
	err := worker.Serve(ctx, stderr)
	if errors.Is(err, worker.ErrStdinNotSocket) {
		return usageError{err}
	}
	return err
}
