package pointio

import (
	"slices"
	"testing"
)

func TestRampedRows(t *testing.T) {
	cases := []struct {
		rows int
		want []int // the chunks' sizes from the start
	}{
		{8, []int{1, 2, 4, 8, 8}},
		{1 << 23, []int{1 << 20, 1 << 21, 1 << 22, 1 << 23, 1 << 23}},
		{100, []int{12, 25, 50, 100}},
		{4, []int{1, 2, 4, 4}}, // no chunk of rows/8 = 0
		{1, []int{1, 1}},
	}
	for _, c := range cases {
		var got []int
		read := int64(0)
		for range c.want {
			n := RampedRows(c.rows, read)
			got = append(got, n)
			read += int64(n)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("chunks of %d: %v, want %v", c.rows, got, c.want)
		}
	}
	// A chunk that starts inside the ramp (a Parquet group ran past its
	// mark) ends at the next one.
	if got := RampedRows(1<<23, 3<<19); got != 3<<20-3<<19 {
		t.Errorf("from row %d: %d rows", 3<<19, got)
	}
}
