package pointio

import (
	"bufio"
	"fmt"
)

// AnswerKind is the query whose answers a stream writer writes.
type AnswerKind int

const (
	// KindNearest is one nearest reference an observation (WriteResults).
	KindNearest AnswerKind = iota + 1
	// KindKNearest is k references an observation (WriteKResults).
	KindKNearest
	// KindWithinCounts is a radius query's counts (WriteWithinCounts).
	KindWithinCounts
	// KindWithinLists is a radius query's references (WriteWithinLists).
	KindWithinLists
)

// Answers is one chunk of a query's answers: those of observations
// [Base, Base+N) of the whole input, read through the functions of the
// chunk's kind with indices from 0 (the chunk's first observation). The
// functions are called from several goroutines at once, and only until
// the writer's Write returns: the chunk's buffers are then free.
type Answers struct {
	Base, N int
	// Nearest answers KindNearest.
	Nearest func(i int) (ref uint32, metres float64)
	// KRow answers KindKNearest (K, the writer's, a row).
	KRow KRow
	// Within answers KindWithinCounts (Count) and KindWithinLists.
	Within Within
}

// AnswerWriter writes a query's answers a chunk at a time, in input
// order, as the whole-answer writers of its format write them all at
// once: the same bytes.
type AnswerWriter interface {
	// Write writes a chunk, the one after the last one written.
	Write(a Answers) error
	// Close writes what follows the last chunk (a footer, an archive's
	// directory) and flushes. It writes no more than that on an error.
	Close() error
	// Abort releases what the writer holds (temporary files) without
	// finishing the output: after an error, before the output is removed.
	Abort()
}

// csvAnswers writes answers as CSV: the header, then each chunk's lines,
// formatted on every core in blocks and written in order.
type csvAnswers struct {
	w       *bufio.Writer
	rounds  blockRounds // the encodings, reused chunk after chunk
	kind    AnswerKind
	k       int
	started bool
	next    int // the observation the next chunk must start with
}

// NewCSVAnswerWriter writes answers of kind (k a row for KindKNearest) as
// CSV to w, as WriteResults, WriteKResults, WriteWithinCounts and
// WriteWithinLists write them.
func NewCSVAnswerWriter(w *bufio.Writer, kind AnswerKind, k int) (AnswerWriter, error) {
	if kind < KindNearest || kind > KindWithinLists || (kind == KindKNearest && k < 1) {
		return nil, fmt.Errorf("write results: answers of kind %d with k %d", kind, k)
	}
	return &csvAnswers{w: w, kind: kind, k: k}, nil
}

// NewCSVAnswerPartWriter writes a part of the CSV NewCSVAnswerWriter
// writes: the lines of observations lo on (Write's chunks, Base counted
// in the whole output), after the header where header says (the first
// part). Parts written one after the other are the whole output.
func NewCSVAnswerPartWriter(w *bufio.Writer, kind AnswerKind, k, lo int, header bool) (AnswerWriter, error) {
	aw, err := NewCSVAnswerWriter(w, kind, k)
	if err != nil {
		return nil, err
	}
	c := aw.(*csvAnswers)
	c.next, c.started = lo, !header
	return c, nil
}

func (c *csvAnswers) header() string {
	switch {
	case c.kind == KindWithinCounts:
		return withinCountsHeader
	case c.kind == KindKNearest && c.k > 1:
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

func (c *csvAnswers) Write(a Answers) error {
	if err := checkOrder(&c.next, a); err != nil {
		return err
	}
	if err := c.start(); err != nil {
		return err
	}
	block, line := c.lines(a)
	if err := c.rounds.write(c.w, a.N, block, func(dst []byte, lo, hi int) ([]byte, error) {
		if c.kind == KindNearest {
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
func (c *csvAnswers) lines(a Answers) (int, func(dst []byte, j int) []byte) {
	switch c.kind {
	case KindKNearest:
		row := func(i, r int) (uint32, float64, bool) { return a.KRow(i-a.Base, r) }
		if c.k == 1 {
			return 1 << 16, func(dst []byte, j int) []byte { return appendNearestOrNone(dst, a.Base+j, row) }
		}
		return 1 << 14, func(dst []byte, j int) []byte { return appendKLines(dst, a.Base+j, c.k, row) }
	case KindWithinCounts:
		return 1 << 16, func(dst []byte, j int) []byte { return appendCountLine(dst, a.Base+j, a.Within.Count(j)) }
	case KindWithinLists:
		return listBlock(a), func(dst []byte, j int) []byte { return appendListLines(dst, a.Base+j, j, a.Within) }
	}
	return 1 << 16, nil
}

// listBlock is how many observations' radius lists are encoded as one
// block: 4,096, or fewer where their lists are long, so that a block
// holds about 2^20 lines (25 MB) whatever the radius. A huge radius's
// blocks of 4,096 observations were 400 MB each, four held at once.
func listBlock(a Answers) int {
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

// checkOrder refuses a chunk that does not start where the last one ended.
func checkOrder(next *int, a Answers) error {
	if a.Base != *next || a.N < 0 {
		return fmt.Errorf("write results: a chunk of observations [%d, %d) after [0, %d)", a.Base, a.Base+a.N, *next)
	}
	*next += a.N
	return nil
}
