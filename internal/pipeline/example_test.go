package pipeline_test

import (
	"context"
	"fmt"
	"io"

	"github.com/geoknn/geoknn/internal/pipeline"
)

// Chunks of numbers are read, squared and printed in order, three slots
// going round.
func ExampleRun() {
	type slot struct{ in, out []int }
	next := 0
	st, err := pipeline.Run(context.Background(), 3, func() *slot { return new(slot) }, pipeline.Stages[slot]{
		Read: func(_ context.Context, s *slot) error {
			if next == 9 {
				return io.EOF
			}
			s.in = append(s.in[:0], next, next+1, next+2)
			next += 3
			return nil
		},
		Query: func(_ context.Context, s *slot) error {
			s.out = s.out[:0]
			for _, v := range s.in {
				s.out = append(s.out, v*v)
			}
			return nil
		},
		Write: func(_ context.Context, s *slot) error {
			fmt.Println(s.out)
			return nil
		},
	})
	fmt.Println(st.Chunks, "chunks,", err)
	// Output:
	// [0 1 4]
	// [9 16 25]
	// [36 49 64]
	// 3 chunks, <nil>
}
