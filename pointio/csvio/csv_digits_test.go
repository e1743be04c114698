package csvio

import (
	"math"
	"strconv"
	"testing"
)

// decimalDigits counts as strconv writes, at every power of ten's edge.
func TestDecimalDigits(t *testing.T) {
	for _, v := range []uint64{0, 9, 10, 99, 100, 999999, 1000000, math.MaxUint32, 1e19 - 1, 1e19, math.MaxUint64} {
		if got, want := decimalDigits(v), len(strconv.FormatUint(v, 10)); got != want {
			t.Errorf("decimalDigits(%d) = %d, want %d", v, got, want)
		}
	}
}
