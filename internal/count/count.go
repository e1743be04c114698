// Package count reads the counts a command line gives: a number of
// points or a size written as a power (2^27), an integer (134217728,
// 1_000_000) or a float with no fraction (1e6), from 0 to Max. The
// benchmark's size specs and the command's point sources read them alike.
package count

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Max is the largest count Parse accepts (2^40).
const Max = 1 << 40

// Parse reads one count: 2^27, 134217728, 1e6 or 1_000_000.
func Parse(s string) (int, error) {
	s = strings.ReplaceAll(strings.TrimSpace(s), "_", "")
	if b, e, ok := strings.Cut(s, "^"); ok {
		base, err1 := strconv.Atoi(b)
		exp, err2 := strconv.Atoi(e)
		if err1 != nil || err2 != nil || base < 1 || exp < 0 {
			return 0, fmt.Errorf("bad count %q (want e.g. 2^20, 1048576 or 1e6)", s)
		}
		v := 1.0
		for i := 0; i < exp && v <= Max; i++ {
			v *= float64(base)
		}
		if v > Max {
			return 0, fmt.Errorf("count %q is larger than 2^40", s)
		}
		return int(v), nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		if n < 0 || n > Max {
			return 0, fmt.Errorf("count %q is not in [0, 2^40]", s)
		}
		return n, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || v != math.Trunc(v) || v > Max {
		return 0, fmt.Errorf("bad count %q (want e.g. 2^20, 1048576 or 1e6)", s)
	}
	return int(v), nil
}
