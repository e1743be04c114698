package pipeline

import (
	"context"
	"fmt"
	"io"
	"time"

	"golang.org/x/sync/errgroup"
)

// Stages are what a chunk goes through, each called from a goroutine of
// its own, one chunk at a time, in input order.
type Stages[S any] struct {
	// Read fills slot with the next chunk, or returns io.EOF when there
	// is none. A slot comes back to Read once its chunk is written, with
	// whatever it held (buffers to reuse).
	Read func(ctx context.Context, slot *S) error
	// Query answers the chunk in slot.
	Query func(ctx context.Context, slot *S) error
	// Write writes slot's answers: the chunks come in the order read.
	Write func(ctx context.Context, slot *S) error
}

// Stats are a run's chunk count and each stage's busy time: the stage
// that is busy for about the wall time is the one the run waits on.
type Stats struct {
	Chunks                 int
	Read, Query, Write     time.Duration
	Wall                   time.Duration
	ReadWait, WriteWaiting time.Duration // Read waiting for a free slot; Write waiting for answers
}

// Run sends chunks through st with depth slots (at least 1; 3 keeps every
// stage busy), made by newSlot as needed, and returns when the last chunk
// is written or at the first error.
func Run[S any](ctx context.Context, depth int, newSlot func() *S, st Stages[S]) (Stats, error) {
	depth = max(depth, 1)
	start := time.Now()
	eg, ctx := errgroup.WithContext(ctx)
	free := make(chan *S, depth)
	toQuery, toWrite := make(chan *S, depth), make(chan *S, depth)
	var stats Stats
	eg.Go(func() error {
		return guard("read", func() error { return readLoop(ctx, depth, newSlot, st.Read, free, toQuery, &stats) })
	})
	eg.Go(func() error {
		return guard("query", func() error { return queryLoop(ctx, st.Query, toQuery, toWrite, &stats) })
	})
	eg.Go(func() error {
		return guard("write", func() error { return writeLoop(ctx, st.Write, toWrite, free, &stats) })
	})
	err := eg.Wait()
	stats.Wall = time.Since(start)
	return stats, err
}

// guard runs a stage, turning a panic into its error: a bug in one stage
// must not take the process down with the output's temporary file.
func guard(stage string, run func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("pipeline: internal error in the %s stage: %v", stage, p)
		}
	}()
	return run()
}

// readLoop reads chunks into free slots (new ones while fewer than depth
// exist) until the input ends.
func readLoop[S any](ctx context.Context, depth int, newSlot func() *S, read func(context.Context, *S) error, free <-chan *S, out chan<- *S, stats *Stats) error {
	defer close(out)
	made := 0
	for {
		var slot *S
		t := time.Now()
		select {
		case slot = <-free:
		default:
			if made < depth {
				slot, made = newSlot(), made+1
				break
			}
			select {
			case slot = <-free:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		stats.ReadWait += time.Since(t)
		if err := ctx.Err(); err != nil {
			return err
		}
		t = time.Now()
		err := read(ctx, slot)
		stats.Read += time.Since(t)
		// Only the reader's own io.EOF ends the input: a read error that
		// wraps one (a file cut short) must fail the run, not end it.
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := send(ctx, out, slot); err != nil {
			return err
		}
	}
}

// queryLoop answers the chunks read, in order; none once the run stops.
func queryLoop[S any](ctx context.Context, query func(context.Context, *S) error, in <-chan *S, out chan<- *S, stats *Stats) error {
	defer close(out)
	for slot := range in {
		if err := ctx.Err(); err != nil {
			return err
		}
		t := time.Now()
		err := query(ctx, slot)
		stats.Query += time.Since(t)
		if err != nil {
			return err
		}
		if err := send(ctx, out, slot); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// writeLoop writes the answered chunks in order and frees their slots.
func writeLoop[S any](ctx context.Context, write func(context.Context, *S) error, in <-chan *S, free chan<- *S, stats *Stats) error {
	for {
		t := time.Now()
		slot, ok := <-in
		stats.WriteWaiting += time.Since(t)
		if !ok {
			return ctx.Err()
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		t = time.Now()
		err := write(ctx, slot)
		stats.Write += time.Since(t)
		if err != nil {
			return err
		}
		stats.Chunks++
		free <- slot // room for every slot: never blocks
	}
}

func send[S any](ctx context.Context, out chan<- *S, slot *S) error {
	select {
	case out <- slot:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
