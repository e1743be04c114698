package partition

import (
	"sort"
	"sync"
	"testing"
)

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		n, size int
		want    []Job
	}{
		{0, 4, []Job{}},
		{3, 4, []Job{{0, 3}}},
		{8, 4, []Job{{0, 4}, {4, 8}}},
		{9, 4, []Job{{0, 4}, {4, 8}, {8, 9}}},
	} {
		got, err := Split(tc.n, tc.size)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(tc.want) {
			t.Fatalf("Split(%d, %d) = %v, want %v", tc.n, tc.size, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("Split(%d, %d)[%d] = %v, want %v", tc.n, tc.size, i, got[i], tc.want[i])
			}
		}
	}
	if _, err := Split(10, 0); err == nil {
		t.Error("Split with size 0: no error")
	}
}

func TestBatchSize(t *testing.T) {
	for _, tc := range []struct {
		n, workers, per, minJ, maxJ, align, want int
	}{
		{1 << 27, 1, 8, 1 << 20, 1 << 30, 2048, 1 << 24},
		{1 << 27, 2, 8, 1 << 20, 1 << 30, 2048, 1 << 23},
		{1 << 27, 1, 8, 1 << 20, 1 << 22, 2048, 1 << 22}, // memory-bound
		{1000, 4, 8, 1 << 20, 1 << 30, 2048, 1 << 20},    // tiny input: one job
		{1, 1, 1, 0, 0, 2048, 2048},
	} {
		if got := BatchSize(tc.n, tc.workers, tc.per, tc.minJ, tc.maxJ, tc.align); got != tc.want {
			t.Errorf("BatchSize(%+v) = %d, want %d", tc, got, tc.want)
		}
	}
}

// Every job is handed out exactly once, whatever the interleaving, and an
// idle worker steals rather than stopping.
func TestQueueHandsOutEveryJobOnce(t *testing.T) {
	jobs, _ := Split(1000, 7)
	q := NewQueue(jobs, 3)
	var mu sync.Mutex
	var got []Job
	stolen := 0
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				j, s, ok := q.Next(w)
				if !ok {
					return
				}
				mu.Lock()
				got = append(got, j)
				if s {
					stolen++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	sort.Slice(got, func(a, b int) bool { return got[a].Start < got[b].Start })
	if len(got) != len(jobs) {
		t.Fatalf("handed out %d jobs, want %d", len(got), len(jobs))
	}
	for i := range got {
		if got[i] != jobs[i] {
			t.Fatalf("job %d = %v, want %v", i, got[i], jobs[i])
		}
	}
	// A single worker drains everyone's queue by stealing.
	q = NewQueue(jobs, 3)
	n := 0
	for {
		if _, _, ok := q.Next(0); !ok {
			break
		}
		n++
	}
	if n != len(jobs) {
		t.Errorf("worker 0 alone took %d jobs, want %d", n, len(jobs))
	}
}
