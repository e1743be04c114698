package ranks

import (
	"context"
	"os"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/arrowio"
)

// together is how the ranks write one format together, each its rows at
// their offsets in the one file.
type together struct {
	// answers writes the rank's answers.
	answers func(o *Output, ctx context.Context, f *os.File, p Part) error
	// rows writes them with identifier columns; nil where those are
	// gathered to rank 0 (.npz: an id column's width is the longest id,
	// which no rank knows alone).
	rows func(o *Output, ctx context.Context, f *os.File, t Rows) error
	// groupRows, where not 0, makes every rank's range whole groups of
	// that many rows (Parquet's row groups: each rank's are one
	// process's).
	groupRows int
}

// togetherFor is how the ranks write format together; false where they
// cannot and rank 0 writes it alone (Arrow IPC: its footer lists every
// batch). It is the one place the ranks' output names formats, where a
// registry of formats would plug in.
func togetherFor(format string) (together, bool) {
	switch format {
	case pointio.FormatCSV:
		return together{answers: (*Output).writeCSVPart, rows: (*Output).writeCSVRowsPart}, true
	case pointio.FormatNPZ:
		return together{answers: (*Output).writeNPZPart}, true
	case pointio.FormatParquet:
		return together{answers: (*Output).writeParquetPart, rows: (*Output).writeParquetRowsPart,
			groupRows: arrowio.GroupRows()}, true
	}
	return together{}, false
}

// Together says whether the ranks can write a file of format together,
// with identifier columns where ids.
func Together(format string, ids bool) bool {
	t, ok := togetherFor(format)
	return ok && (!ids || t.rows != nil)
}

// SharedFormat is format where the ranks can write path together (Together,
// and path a new or a regular file), else "": into a device or a pipe
// rank 0 streams alone.
func SharedFormat(path, format string, ids bool) string {
	if !Together(format, ids) {
		return ""
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return ""
	}
	return format
}

// GroupRows is the rows of the groups every rank's range of a file of
// format must be whole groups of (Shares); 0 for any range.
func GroupRows(format string) int {
	t, _ := togetherFor(format)
	return t.groupRows
}
