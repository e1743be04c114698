package engine

import (
	"math"
	"strings"
	"testing"

	"github.com/geoknn/geoknn/internal/index"
)

// The checks every engine applies refuse what no engine can answer, and
// name what is wrong.
func TestChecks(t *testing.T) {
	obs := index.Radians64([]float64{0, 0.1}, []float64{0, 0.2})
	ref := index.Radians64([]float64{0.3}, []float64{0.4})
	ok := Request{Obs: obs, Ref: ref}
	for _, tc := range []struct {
		name, want string
		err        error
	}{
		{"result too short", "room for 1 indices", CheckRequest(ok, Result{Index: make([]uint32, 1), Distance: make([]float32, 2)}, true)},
		{"no references", "empty", CheckRequest(Request{Obs: obs, Ref: index.Radians64(nil, nil)}, Result{}, true)},
		{"negative batch", "batch size", CheckPoints(Request{Obs: obs, Ref: ref, BatchSize: -1}, true)},
		{"grid too fine", "grid side", CheckPoints(Request{Obs: obs, Ref: ref, GridSide: index.MaxGridSide + 1}, true)},
		{"k above the references", "k = 2 is more than the 1 references", CheckK(ok, 1, KResult{K: 2})},
		{"k of 0", "want at least 1", CheckKRefs(0, 5)},
		{"no distance", "positive distance", CheckK(ok, math.NaN(), KResult{K: 1, Index: make([]uint32, 2), Distance: make([]float32, 2)})},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, tc.err, tc.want)
		}
	}
	if err := CheckRequest(ok, Result{Index: make([]uint32, 2), Distance: make([]float32, 2)}, true); err != nil {
		t.Errorf("a good request: %v", err)
	}
}
