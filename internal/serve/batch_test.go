package serve

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestBatcherLosesNoJob: many goroutines submit one-point queries to few
// slots at once, alone or queued behind a leader; every one is answered
// (a job queued while its slot was taken and never picked up would hang),
// and every slot is free after.
func TestBatcherLosesNoJob(t *testing.T) {
	for _, workers := range []int{1, 2, 3} {
		lat, lon := uniform(1024, 1)
		s, err := New(context.Background(), Config{Open: cpuOpen, LatRad: radians(lat), LonRad: radians(lon), Workers: workers, BatchWait: -1})
		if err != nil {
			t.Fatal(err)
		}
		qlat, qlon := uniform(64, 2)
		var wg sync.WaitGroup
		for g := range 64 {
			wg.Go(func() {
				for range 300 {
					q := &query{lat: radians(qlat[g : g+1]), lon: radians(qlon[g : g+1])}
					a, err := s.b.submit(context.Background(), q)
					if err != nil {
						t.Error(err)
						return
					}
					a.snap.release()
				}
			})
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Fatalf("%d workers: queries unanswered after 60 s", workers)
		}
		if n := s.b.busy.Load(); n != 0 {
			t.Fatalf("%d workers: %d slots still taken", workers, n)
		}
		if n := s.m.batchRequests.count(); n == 0 || n > 64*300 {
			t.Fatalf("%d workers: %d batches", workers, n)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
