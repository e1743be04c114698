package cpu

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A build that outlives its context is left behind: stoppable returns at
// once with the context's error, and with nil when the build ends first.
func TestStoppable(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	defer close(release)
	go func() { time.Sleep(10 * time.Millisecond); cancel() }()
	if err := stoppable(ctx, func() { <-release }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled build: %v, want context.Canceled", err)
	}
	ran := false
	if err := stoppable(context.Background(), func() { ran = true }); err != nil || !ran {
		t.Errorf("finished build: err %v, ran %v", err, ran)
	}
}
