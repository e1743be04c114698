package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/formats"
	"github.com/geoknn/geoknn/stream"
)

// checkOutputs is every command's guard of the files it will write, run
// before any work: an output flag (of names) given an empty name is a
// usage error, and every output (pointio.CheckOutputs) must be a place
// that can take it, none an input, a read-only file or another output.
// The commands then write through pointio.Write, which streams into
// devices and pipes and replaces files only whole, leaving nothing on an
// error or a signal.
func checkOutputs(fs *flag.FlagSet, names []string, outputs, inputs []string) error {
	for _, name := range names {
		fl := fs.Lookup(name)
		given := false
		fs.Visit(func(v *flag.Flag) { given = given || v == fl })
		if given && fl.Value.String() == "" {
			return usagef("%s: --%s '': an empty file name (- is standard output where a command takes it)", fs.Name(), name)
		}
	}
	return pointio.CheckOutputs(outputs, inputs)
}

// describe names path in messages: stdName ("standard input", "standard
// output") for "-".
func describe(path, stdName string) string {
	if path == "-" {
		return stdName
	}
	return path
}

// whole is a query's answers held whole, as every format writes them: one
// chunk of answers, or with identifiers the table of rows.
type whole struct {
	kind  stream.AnswerKind
	k     int
	a     stream.Answers
	table func(lb labels) table // the rows with identifiers
}

// write writes w to path in out's format and says so on log: the one
// write-and-report of answers held whole (streamJob.write streams).
func (w whole) write(ctx context.Context, path string, out *formats.Format, stdout, log io.Writer, lb labels) error {
	t := time.Now()
	var err error
	if lb.any() {
		err = w.table(lb).writeTo(ctx, path, stdout, out)
	} else {
		err = out.WriteWhole(ctx, path, stdout, w.kind, w.k, w.a)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "wrote %s (%s, %d observations) in %.3f s\n", describe(path, "standard output"), out.Name, w.a.N, time.Since(t).Seconds())
	return nil
}
