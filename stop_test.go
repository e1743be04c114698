package geoknn_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/geoknn/geoknn"
)

// A query stopped while the CPU engine plans its index (seconds for
// millions of references: every candidate grid is built over all of
// them) returns promptly with the context's error, for the nearest and
// the k nearest alike.
func TestCPUStopsWhilePlanning(t *testing.T) {
	if testing.Short() {
		t.Skip("builds indexes of 2^22 references")
	}
	obs, _ := geoknn.Generated(geoknn.UniformSphere, 1<<16, 1)
	ref, _ := geoknn.Generated(geoknn.UniformSphere, 1<<22, 2)
	s, err := geoknn.NewSearcher(geoknn.Options{Engine: geoknn.CPU})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for name, query := range map[string]func(ctx context.Context) error{
		"nearest":   func(ctx context.Context) error { _, err := s.Nearest(ctx, obs, ref); return err },
		"k nearest": func(ctx context.Context) error { _, err := s.KNearest(ctx, obs, ref, 4, 0); return err },
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		start := time.Now()
		err := query(ctx)
		cancel()
		if took := time.Since(start); !errors.Is(err, context.DeadlineExceeded) || took > 3*time.Second {
			t.Errorf("%s: %v after %v, want the deadline's error within 3 s", name, err, took)
		}
	}
}
