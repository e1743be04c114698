package csvio

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/geoknn/geoknn/pointio"
)

// RowsWriter writes WriteRows's table a chunk of items at a time
// (the answers that carry identifiers), byte for byte as WriteRows
// writes them all at once.
type RowsWriter struct {
	w       *bufio.Writer
	rounds  pointio.BlockRounds // the encodings, reused chunk after chunk
	header  string
	started bool
}

// NewRowsWriter writes rows under header to w.
func NewRowsWriter(w *bufio.Writer, header []string) *RowsWriter {
	return &RowsWriter{w: w, header: strings.TrimSuffix(string(appendCSVRecord(nil, header)), "\n")}
}

// NewRowsPartWriter writes a part of NewRowsWriter's output: the
// rows of a range of items, after the header where first says (the first
// part). Parts written one after the other are the whole output.
func NewRowsPartWriter(w *bufio.Writer, header []string, first bool) *RowsWriter {
	c := NewRowsWriter(w, header)
	c.started = !first
	return c
}

// Write writes the rows rows(j, add) adds for each of n items (j from 0),
// after those of the last chunk; rows is called from several goroutines
// at once.
func (c *RowsWriter) Write(n int, rows func(j int, add func(fields ...string))) error {
	if err := c.start(); err != nil {
		return err
	}
	err := c.rounds.Write(c.w, n, 1<<14, func(dst []byte, lo, hi int) ([]byte, error) {
		for j := lo; j < hi; j++ {
			rows(j, func(fields ...string) { dst = appendCSVRecord(dst, fields) })
		}
		return dst, nil
	})
	if err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}

func (c *RowsWriter) start() error {
	if c.started {
		return nil
	}
	c.started = true
	if _, err := c.w.WriteString(c.header + "\n"); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}

// Close writes the header if no chunk came, and flushes.
func (c *RowsWriter) Close() error {
	if err := c.start(); err != nil {
		return err
	}
	return c.w.Flush()
}
