//go:build !linux

package main

import (
	"context"
	"errors"
	"time"
)

// haveEventLoop: the event loop is Linux's epoll; elsewhere -mode http
// runs a goroutine a connection.
const haveEventLoop = false

func runLoops(context.Context, config, string, [][]byte) (int, time.Duration, []time.Duration, error) {
	return 0, 0, nil, errors.New("no event loop on this system: -threads 0")
}
