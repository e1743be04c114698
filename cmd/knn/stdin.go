package main

import (
	"bufio"
	"context"
	"os"
	"strings"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/arrowio"
	"github.com/paulmach/orb"
)

// readStdin reads points from standard input: text (CSV, GeoJSON, gzip)
// and .npy as a stream; formats read from their end (Parquet, Arrow, .npz)
// are first copied to a temporary file, removed afterwards.
func readStdin(ctx context.Context, _ string, opts pointio.ReadOptions) ([]orb.Point, []string, error) {
	br, ext := peekStdin(ctx)
	if ext == "" {
		return pointio.ReadReaderIDs(ctx, br, "-", opts)
	}
	tmp, err := pointio.SpoolStdin(ctx, br, "", ext)
	if err != nil {
		return nil, nil, err
	}
	defer os.Remove(tmp)
	read := arrowio.ReadFileIDs
	if ext == ".npz" {
		read = pointio.ReadFileIDs
	}
	pts, ids, err := read(ctx, tmp, opts)
	if err != nil {
		return nil, nil, stdinError{err, tmp}
	}
	return pts, ids, nil
}

// peekStdin is standard input, buffered, and the extension of the format
// its first bytes say when it is one read from its end (Parquet, Arrow,
// .npz); "" for the others (text, gzip, GeoJSON, .npy), read as a stream.
func peekStdin(ctx context.Context) (*bufio.Reader, string) {
	// A read that returns when ctx is done: a signal stops a command
	// waiting on a quiet pipe.
	br := bufio.NewReaderSize(pointio.CancelReader(ctx, os.Stdin), 1<<20)
	head, _ := br.Peek(8)
	switch h := string(head); {
	case strings.HasPrefix(h, "PAR1"):
		return br, ".parquet"
	case strings.HasPrefix(h, "ARROW1"):
		return br, ".arrow"
	case strings.HasPrefix(h, "\xff\xff\xff\xff"):
		return br, ".arrows" // an Arrow IPC stream
	case strings.HasPrefix(h, "PK\x03\x04"):
		return br, ".npz"
	}
	return br, ""
}

// stdinError is an error about the copy of standard input at tmp, told as
// one about standard input: the user never named the copy.
type stdinError struct {
	err error
	tmp string
}

func (e stdinError) Error() string {
	return strings.ReplaceAll(e.err.Error(), e.tmp, "standard input")
}

func (e stdinError) Unwrap() error { return e.err }
