package ranks

import (
	"slices"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	for s, want := range map[string][]int{
		"0-3\n":     {0, 1, 2, 3},
		"0-1,4,6-7": {0, 1, 4, 6, 7},
		"5":         {5},
		"":          nil,
		"3-1":       nil,
		"a-b":       nil,
	} {
		if got := parseCPUList(s); !slices.Equal(got, want) {
			t.Errorf("parseCPUList(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestRankShare(t *testing.T) {
	cpus := []int{0, 1, 2, 3, 4, 5, 6}
	for _, c := range []struct {
		rank, n int
		want    []int
	}{{0, 2, []int{0, 1, 2}}, {1, 2, []int{3, 4, 5, 6}}, {0, 1, cpus}, {3, 8, nil}} {
		if got := rankShare(cpus, c.rank, c.n); !slices.Equal(got, c.want) {
			t.Errorf("rankShare(rank %d of %d) = %v, want %v", c.rank, c.n, got, c.want)
		}
	}
}
