package csvio

import (
	"bufio"
	"fmt"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/stream"
)

// csvAnswers writes answers as CSV lines, a chunk at a time.
type csvAnswers struct {
	w       *bufio.Writer
	rounds  pointio.BlockRounds // the encodings, reused chunk after chunk
	kind    stream.AnswerKind
	k       int
	started bool
	next    int // the observation the next chunk must start with
}

// NewAnswerWriter writes answers of kind (k a row for KindKNearest) as
// CSV to w, as WriteResults, WriteKResults, WriteWithinCounts and
// WriteWithinLists write them.
func NewAnswerWriter(w *bufio.Writer, kind stream.AnswerKind, k int) (stream.AnswerWriter, error) {
	if kind < stream.KindNearest || kind > stream.KindWithinLists || (kind == stream.KindKNearest && k < 1) {
		return nil, fmt.Errorf("write results: answers of kind %d with k %d", kind, k)
	}
	return &csvAnswers{w: w, kind: kind, k: k}, nil
}

// NewAnswerPartWriter writes a part of the CSV NewAnswerWriter
// writes: the lines of observations lo on (Write's chunks, Base counted
// in the whole output), after the header where header says (the first
// part). Parts written one after the other are the whole output.
func NewAnswerPartWriter(w *bufio.Writer, kind stream.AnswerKind, k, lo int, header bool) (stream.AnswerWriter, error) {
	aw, err := NewAnswerWriter(w, kind, k)
	if err != nil {
		return nil, err
	}
	c := aw.(*csvAnswers)
	c.next, c.started = lo, !header
	return c, nil
}

func (c *csvAnswers) header() string {
	switch {
	case c.kind == stream.KindWithinCounts:
		return withinCountsHeader
	case c.kind == stream.KindKNearest && c.k > 1:
		return KResultsHeader
	}
	return ResultsHeader
}

func (c *csvAnswers) start() error {
	if c.started {
		return nil
	}
	c.started = true
	if _, err := c.w.WriteString(c.header() + "\n"); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}

func (c *csvAnswers) Write(a stream.Answers) error {
	if err := stream.CheckOrder(&c.next, a); err != nil {
		return err
	}
	if err := c.start(); err != nil {
		return err
	}
	block, line := c.lines(a)
	if err := c.rounds.Write(c.w, a.N, block, func(dst []byte, lo, hi int) ([]byte, error) {
		if c.kind == stream.KindNearest {
			return appendRows(dst, a.Base+lo, a.Base+hi, func(i int) (uint32, float64) { return a.Nearest(i - a.Base) })
		}
		for j := lo; j < hi; j++ {
			dst = line(dst, j)
		}
		return dst, nil
	}); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}

// lines is the block size of a's kind and its observation j's lines, as
// the whole-answer writer's.
func (c *csvAnswers) lines(a stream.Answers) (int, func(dst []byte, j int) []byte) {
	switch c.kind {
	case stream.KindKNearest:
		row := func(i, r int) (uint32, float64, bool) { return a.KRow(i-a.Base, r) }
		if c.k == 1 {
			return 1 << 16, func(dst []byte, j int) []byte { return appendNearestOrNone(dst, a.Base+j, row) }
		}
		return 1 << 14, func(dst []byte, j int) []byte { return appendKLines(dst, a.Base+j, c.k, row) }
	case stream.KindWithinCounts:
		return 1 << 16, func(dst []byte, j int) []byte { return appendCountLine(dst, a.Base+j, a.Within.Count(j)) }
	case stream.KindWithinLists:
		return listBlock(a), func(dst []byte, j int) []byte { return appendListLines(dst, a.Base+j, j, a.Within) }
	}
	return 1 << 16, nil
}

// listBlock is how many observations' radius lists are encoded as one
// block: 4,096, or fewer where their lists are long, so that a block
// holds about 2^20 lines (25 MB) whatever the radius. A huge radius's
// blocks of 4,096 observations were 400 MB each, four held at once.
func listBlock(a stream.Answers) int {
	entries := 0
	for j := range a.N {
		entries += a.Within.Count(j)
	}
	perObs := max(1, entries/max(1, a.N))
	return max(1, min(1<<12, (1<<20)/perObs))
}

func (c *csvAnswers) Close() error {
	if err := c.start(); err != nil {
		return err
	}
	if err := c.w.Flush(); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}

func (c *csvAnswers) Abort() {}
