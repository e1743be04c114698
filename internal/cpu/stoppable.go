package cpu

import "context"

// stoppable runs build on a goroutine of its own and returns when it is
// done, or with ctx's error as soon as ctx ends. The planner and the index
// builds take whole seconds for tens of millions of references (the plan
// samples indexes of several densities, each built over every reference)
// and check no context themselves: a stopped query returns at once
// instead of waiting for them. An abandoned build ends by itself; the
// caller must not read what it writes (nothing does after an error), and
// its memory is collected once it ends.
func stoppable(ctx context.Context, build func()) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		build()
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
