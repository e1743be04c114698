package formats

import (
	"bufio"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/geoknn/geoknn/stream"
	"github.com/paulmach/orb"
)

// Format is one file format that points or answers are written in: its
// name, the extensions that choose it, and its writers. A writer left
// nil is one the format does not have (.npy holds points, not answers).
type Format struct {
	// Name is --out-format's value and the name reports give.
	Name string
	// Exts are the extensions, lower case with the dot, that choose the
	// format for an output; the first is the one messages suggest.
	Exts []string
	// Answers writes a query's answers to w a chunk at a time; whole
	// answers are one chunk.
	Answers func(w *bufio.Writer, kind stream.AnswerKind, k int, o Options) (stream.AnswerWriter, error)
	// AnswersAt, when set, writes the answers into the output file itself
	// at offsets (.npz: every array at its place, no temporary file); a
	// pipe or standard output gets Answers.
	AnswersAt func(f io.WriterAt, kind stream.AnswerKind, k int, o Options) (stream.AnswerWriter, error)
	// Rows writes answers that carry identifiers (--obs-id, --ref-id) as
	// rows of typed values under fields.
	Rows func(w *bufio.Writer, fields []arrow.Field, o Options) (RowsWriter, error)
	// RowsWhole says Rows holds every row until Close (.npz: a text
	// column's width is its longest value), so rows with identifiers in
	// this format are not streamed: they would all be held anyway.
	RowsWhole bool
	// Unmatched says the format can give an observation with no answer a
	// row of its own (stream.Within.KeepUnmatched: CSV's "i,-1,").
	Unmatched bool
	// Points writes points, and their other columns where Attributes.
	Points func(w *bufio.Writer, p Points) error
	// Attributes says Points keeps the points' other columns (ids,
	// names); the NumPy formats hold numbers only.
	Attributes bool
}

// Options are what a writer may be told beyond its kind of answers.
type Options struct {
	// Rows is the number of observations when known before the first
	// chunk (from the input's metadata), else -1: .npz then holds its
	// first array in a temporary file too.
	Rows int
	// Dir is where temporary files go ("": os.TempDir()).
	Dir string
	// MemoryBytes bounds the batches the Parquet and Arrow writers
	// encode at once (0: their default).
	MemoryBytes int
}

// RowsWriter writes rows of typed values (int64, int32, uint32, float64
// or string, in the fields' order) a chunk of items at a time, the same
// bytes however the items are cut into chunks.
type RowsWriter interface {
	// Write adds the rows rows(i, add) adds for each of n items, after
	// those of the last chunk; rows may be called from several
	// goroutines at once.
	Write(n int, rows func(i int, add func(vals ...any))) error
	// Close writes what follows the last rows and flushes.
	Close() error
	// Abort releases what the writer holds without finishing it.
	Abort()
}

// Points are points to write, degrees, with their other columns as
// text (Names[c]'s values in Values[c], a value a point).
type Points struct {
	Pts    []orb.Point
	Names  []string
	Values [][]string
}
