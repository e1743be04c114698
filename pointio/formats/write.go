package formats

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/stream"
)

// WriteAnswers writes answers of kind (k a row for KindKNearest) to path
// in f, all or nothing (pointio.Write; "-" is stdout): fill writes the
// chunks into the format's writer, which is then closed, or aborted when
// fill fails. The one path of every answer output, streamed or whole
// (WriteWhole). The writer's own errors name the output; fill's come
// back as they are.
func (f *Format) WriteAnswers(ctx context.Context, path string, stdout io.Writer, kind stream.AnswerKind, k int, o Options,
	fill func(w stream.AnswerWriter) error) error {
	streamed := func(bw *bufio.Writer) error {
		w, err := f.Answers(bw, kind, k, o)
		return finish(path, w, err, fill)
	}
	if f.AnswersAt == nil {
		return pointio.Write(ctx, path, stdout, streamed)
	}
	return pointio.WriteAt(ctx, path, stdout, func(file *os.File) error {
		at := o
		at.Dir = filepath.Dir(path) // the spills beside the output
		w, err := f.AnswersAt(file, kind, k, at)
		return finish(path, w, err, fill)
	}, streamed)
}

// WriteWhole writes answers held whole: one chunk.
func (f *Format) WriteWhole(ctx context.Context, path string, stdout io.Writer, kind stream.AnswerKind, k int, a stream.Answers) error {
	return f.WriteAnswers(ctx, path, stdout, kind, k, Options{Rows: a.N}, func(w stream.AnswerWriter) error {
		return WriterError(path, w.Write(a))
	})
}

// finish runs fill into w (made with err) and closes w, or aborts it.
func finish[W interface {
	Close() error
	Abort()
}](path string, w W, err error, fill func(w W) error) error {
	if err != nil {
		return WriterError(path, err)
	}
	if err := fill(w); err != nil {
		w.Abort()
		return err
	}
	return WriterError(path, w.Close())
}

// WriteRows writes rows of fields to path in f, all or nothing, as
// WriteAnswers writes answers: fill writes the chunks.
func (f *Format) WriteRows(ctx context.Context, path string, stdout io.Writer, fields []arrow.Field, o Options,
	fill func(w RowsWriter) error) error {
	if f.Rows == nil {
		return f.noRows()
	}
	return pointio.Write(ctx, path, stdout, func(bw *bufio.Writer) error {
		w, err := f.Rows(bw, fields, o)
		return finish(path, w, err, fill)
	})
}

// noRows is the error of a format without rows of identifiers.
func (f *Format) noRows() error {
	return fmt.Errorf("%s answers carry no identifier columns (--obs-id, --ref-id)", f.Name)
}

// CheckRows refuses, before any work, answers with identifiers in a
// format that has no rows for them.
func (f *Format) CheckRows(ids bool) error {
	if ids && f.Rows == nil {
		return f.noRows()
	}
	return nil
}

// WriterError names the output in an error of its writer (nil: nil).
func WriterError(path string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("writing %s: %w", path, err)
}
