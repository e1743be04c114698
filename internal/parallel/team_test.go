package parallel

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestTeamCoversEveryIndexOnce(t *testing.T) {
	for _, workers := range []int{1, 2, 5, 0} {
		team := NewTeam(workers)
		if workers == 0 {
			team = nil // Blocks on GOMAXPROCS goroutines
		}
		for step, tc := range []struct{ n, block int }{{0, 4}, {1, 4}, {10, 3}, {1000, 7}, {1000, 1000}, {5, 0}, {100000, 64}} {
			if step == 3 {
				time.Sleep(3 * teamSpin) // the workers asleep: the next step wakes them
			}
			hits := make([]atomic.Int32, tc.n)
			team.Blocks(tc.n, tc.block, func(w, lo, hi int) {
				if w < 0 || w >= team.Workers() {
					t.Errorf("workers %d %+v: worker %d outside [0, %d)", workers, tc, w, team.Workers())
				}
				for i := lo; i < hi; i++ {
					hits[i].Add(1)
				}
			})
			for i := range hits {
				if h := hits[i].Load(); h != 1 {
					t.Fatalf("workers %d %+v: index %d visited %d times", workers, tc, i, h)
				}
			}
		}
		team.Close()
	}
}

// TestTeamStepsInOrder checks that a step returns only when every block is
// done, over many short steps: each reads what the one before wrote.
func TestTeamStepsInOrder(t *testing.T) {
	team := NewTeam(4)
	defer team.Close()
	a, b := make([]int, 4096), make([]int, 4096)
	for step := range 200 {
		src, dst := a, b
		if step%2 == 1 {
			src, dst = b, a
		}
		team.Blocks(len(dst), 16, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				dst[i] = src[i] + 1
			}
		})
	}
	for i, v := range a {
		if v != 200 {
			t.Fatalf("a[%d] = %d after 200 steps, want 200", i, v)
		}
	}
}

func TestTeamCloseIdle(t *testing.T) {
	team := NewTeam(8)
	time.Sleep(3 * teamSpin)
	team.Close() // wakes the sleeping workers and waits for them
	var nilTeam *Team
	nilTeam.Close()
}

func BenchmarkTeamStep(b *testing.B) {
	team := NewTeam(0)
	defer team.Close()
	var sum atomic.Int64
	for b.Loop() {
		team.Blocks(64, 1, func(_, lo, hi int) { sum.Add(int64(hi - lo)) })
	}
}

func BenchmarkBlocksStep(b *testing.B) {
	var sum atomic.Int64
	for b.Loop() {
		Blocks(64, 1, 0, func(_, lo, hi int) { sum.Add(int64(hi - lo)) })
	}
}
