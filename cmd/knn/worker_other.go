//go:build !linux

package main

import (
	"context"
	"errors"
	"io"
)

// cmdWorker needs memfd and descriptor passing, which the worker uses on
// Linux alone (the Python wheel is built for Linux).
func cmdWorker(context.Context, []string, io.Writer, io.Writer) error {
	return errors.New("knn worker: runs on Linux only (memfd shared memory)")
}
