package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
)

// A read error that wraps io.EOF (a file cut short while it is read) fails
// the run: only the reader's own io.EOF ends the input (#41 F1).
func TestRunWrappedEOFIsError(t *testing.T) {
	reads := 0
	_, err := Run(context.Background(), 2, func() *int { return new(int) }, Stages[int]{
		Read: func(_ context.Context, s *int) error {
			if reads++; reads > 3 {
				return fmt.Errorf("in.parquet: row group 3: %w", io.EOF)
			}
			*s = reads
			return nil
		},
		Query: func(context.Context, *int) error { return nil },
		Write: func(context.Context, *int) error { return nil },
	})
	if err == nil || !errors.Is(err, io.EOF) {
		t.Fatalf("Run: err = %v, want the wrapped io.EOF returned", err)
	}
}
