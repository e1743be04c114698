package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime/pprof"

	"github.com/geoknn/geoknn/pointio"
)

// startCPUProfile starts the Go CPU profile --cpu-profile asks for (none
// when path is ""); stop ends it and, when the run succeeded, writes it
// to path as every output is written (whole or not at all), then returns
// the run's error. The profile is held in memory meanwhile: a few MB.
func startCPUProfile(path string, stderr io.Writer) (stop func(ctx context.Context, runErr error) error, err error) {
	if path == "" {
		return func(_ context.Context, runErr error) error { return runErr }, nil
	}
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		return nil, fmt.Errorf("--cpu-profile: %w", err)
	}
	return func(ctx context.Context, runErr error) error {
		pprof.StopCPUProfile()
		if runErr != nil {
			return runErr
		}
		err := pointio.Write(ctx, path, io.Discard, func(w *bufio.Writer) error {
			_, err := w.Write(buf.Bytes())
			return err
		})
		if err != nil {
			return fmt.Errorf("--cpu-profile: %w (the run's outputs are written)", err)
		}
		fmt.Fprintf(stderr, "wrote CPU profile %s (go tool pprof %s)\n", path, path)
		return nil
	}, nil
}
