package stream

import "fmt"

// AnswerKind is the query whose answers a writer writes: it fixes the
// columns of every format (a k-nearest answer has a rank, a count has no
// reference).
type AnswerKind int

const (
	// KindNearest is one nearest reference an observation.
	KindNearest AnswerKind = iota + 1
	// KindKNearest is k references an observation, nearest first.
	KindKNearest
	// KindWithinCounts is a radius query's counts.
	KindWithinCounts
	// KindWithinLists is a radius query's references, nearest first.
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

// KRow is one answer of a k-nearest row: the reference and its distance in
// metres, or ok false past the references found within the distance limit.
type KRow func(i, rank int) (ref uint32, metres float64, ok bool)

// Within is a radius query's answer as the writers read it: the count of
// observation i, and (with lists) its rank-th reference and distance in
// metres.
type Within struct {
	Count func(i int) int
	Ref   func(i, rank int) (ref uint32, metres float64)
	// KeepUnmatched asks a row format that can (CSV) to write "i,-1,"
	// for an observation with no reference in range (the --k 1 --max-m
	// form of a missing answer), so that every observation has a row.
	KeepUnmatched bool
}

// AnswerWriter writes a query's answers a chunk at a time, in input
// order, the same bytes however the answers are cut into chunks.
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

// CheckOrder is the writers' guard of the order: it refuses a chunk that
// does not start at *next, the row after the last chunk written, and
// moves *next past a.
func CheckOrder(next *int, a Answers) error {
	if a.Base != *next || a.N < 0 {
		return fmt.Errorf("write results: a chunk of observations [%d, %d) after [0, %d)", a.Base, a.Base+a.N, *next)
	}
	*next += a.N
	return nil
}
