package ranks

import (
	"context"
	"slices"
	"testing"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/arrowio"
)

// Ranks that write Parquet together split in whole row groups, the spare
// groups to the first ranks (rank 0 spills nothing), the last short; any
// other way splits evenly (the remainder to the last).
func TestShares(t *testing.T) {
	g := arrowio.GroupRows()
	for _, c := range []struct {
		format  string
		n, size int
		want    []int
	}{
		{"", 10, 3, []int{3, 3, 4}},
		{pointio.FormatCSV, 10, 3, []int{3, 3, 4}},
		{pointio.FormatParquet, 2*g + 5, 2, []int{2 * g, 5}},
		{pointio.FormatParquet, 2*g + 5, 3, []int{g, g, 5}},
		{pointio.FormatParquet, g + 5, 3, []int{g, 5, 0}},
	} {
		got := Shares(c.format, c.n, c.size)
		if !slices.Equal(got, c.want) {
			t.Errorf("Shares(%q, %d, %d) = %v, want %v", c.format, c.n, c.size, got, c.want)
		}
		if n := Total(got); n != c.n {
			t.Errorf("Shares(%q, %d, %d) shares %d", c.format, c.n, c.size, n)
		}
	}
	if got := Offset([]int{4, 3, 3}, 2); got != 7 {
		t.Errorf("Offset = %d, want 7", got)
	}
}

// The formats the ranks write together, with identifiers or not.
func TestTogether(t *testing.T) {
	for _, c := range []struct {
		format     string
		alone, ids bool
	}{
		{pointio.FormatCSV, true, true},
		{pointio.FormatParquet, true, true},
		{pointio.FormatNPZ, true, false}, // an id column's width is the longest id
		{pointio.FormatArrow, false, false},
		{"", false, false},
	} {
		if got := Together(c.format, false); got != c.alone {
			t.Errorf("Together(%q) = %v, want %v", c.format, got, c.alone)
		}
		if got := Together(c.format, true); got != c.ids {
			t.Errorf("Together(%q, ids) = %v, want %v", c.format, got, c.ids)
		}
	}
	if got := SharedFormat("/dev/null", pointio.FormatCSV, false); got != "" {
		t.Errorf("SharedFormat(/dev/null) = %q: a device is written by rank 0 alone", got)
	}
	if got := SharedFormat(t.TempDir()+"/new.csv", pointio.FormatCSV, false); got != pointio.FormatCSV {
		t.Errorf("SharedFormat(a new file) = %q", got)
	}
	if GroupRows(pointio.FormatParquet) != arrowio.GroupRows() || GroupRows(pointio.FormatCSV) != 0 {
		t.Error("GroupRows: Parquet's row groups, nothing for the others")
	}
}

// OpenRows reads .npy and Parquet files by rows, nothing else.
func TestOpenRows(t *testing.T) {
	if OpenRows("points.csv", pointio.ReadOptions{}) != nil {
		t.Error("a CSV file read by rows")
	}
	rf := OpenRows("missing.npy", pointio.ReadOptions{})
	if rf == nil {
		t.Fatal("a .npy file not read by rows")
	}
	if _, err := rf.rows(); err == nil {
		t.Error("a missing file has rows")
	}
	if _, _, err := rf.read(context.Background(), 0, 1); err == nil {
		t.Error("a missing file read")
	}
}

func TestPath(t *testing.T) {
	for in, want := range map[string]string{"out.csv": "out.rank2.csv", "/a/b/out": "/a/b/out.rank2", "o.csv.gz": "o.csv.rank2.gz"} {
		if got := Path(in, 2); got != want {
			t.Errorf("Path(%q, 2) = %q, want %q", in, got, want)
		}
	}
}

func TestSlowest(t *testing.T) {
	if got := (Reports{Query: []float64{0.5, 2, 2, 1}}).Slowest(); got != 1 {
		t.Errorf("Slowest = %d, want 1 (the first of equals)", got)
	}
}

func TestMine(t *testing.T) {
	c := Check{N: 1000, Sample: 100, Seed: 7}
	a, b := c.Mine(0, 400), c.Mine(400, 600)
	if len(a)+len(b) != 100 {
		t.Errorf("the ranks' samples hold %d, want the 100 one process draws", len(a)+len(b))
	}
	for _, i := range b {
		if i < 0 || i >= 600 {
			t.Errorf("index %d outside the rank's 600", i)
		}
	}
}
