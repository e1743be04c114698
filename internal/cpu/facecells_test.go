package cpu

import (
	"testing"

	"github.com/geoknn/geoknn/internal/index"
)

// The cube has cells for the job's size, fewer where the references are
// skewed, within its bounds.
func TestCellsSideFor(t *testing.T) {
	for _, tc := range []struct {
		nobs, nref int
		skewed     bool
		want       int
	}{
		{1, 1, false, 4},
		{1 << 27, 1 << 16, false, 147}, // about 2 cells a reference
		{1 << 27, 1 << 16, true, 74},
		{1 << 27, 1 << 20, false, 295}, // about 0.5
		{1 << 10, 1 << 16, false, 52},  // at least 0.25
		{1 << 27, 1 << 10, false, 18},  // at most 2
		{1 << 30, 1 << 24, false, index.MaxCellsSide},
	} {
		if got := index.CellsSideFor(tc.nobs, tc.nref, tc.skewed); got != tc.want {
			t.Errorf("cellsSideFor(%d, %d, %v) = %d, want %d", tc.nobs, tc.nref, tc.skewed, got, tc.want)
		}
	}
}
