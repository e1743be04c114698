//go:build !linux

package worker

import (
	"context"
	"errors"
	"io"
)

// Serve needs memfd and descriptor passing, which the worker uses on
// Linux alone (the Python wheel is built for Linux).
func Serve(context.Context, io.Writer) error {
	return errors.New("knn worker: runs on Linux only (memfd shared memory)")
}
