package formats

import (
	"bufio"
	"context"
	"io"
	"os"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/csvio"
	"github.com/geoknn/geoknn/stream"
	"github.com/paulmach/orb"
)

// readPipe reads points from standard input, or from the special file
// path names whose name says no format (ByContent): text
// (CSV, GeoJSON, gzip) and .npy as a stream; formats read from their end
// (Parquet, Arrow, .npz) are first copied to a temporary file, removed
// afterwards. A CSV stream's points are handed to sink as they are parsed.
func readPipe(ctx context.Context, path string, opts pointio.ReadOptions, sink csvio.Sink) ([]orb.Point, []string, error) {
	br, ext, done, err := openPipe(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	defer done()
	if ext == "" {
		var ids []string
		pts, err := readBuffered(ctx, br, path, 0, opts, sink, &ids)
		return endRead(ctx, pts, ids, err)
	}
	tmp, err := pointio.SpoolStdin(ctx, br, "", ext)
	if err != nil {
		return nil, nil, err
	}
	defer os.Remove(tmp)
	pts, ids, err := ReadPoints(ctx, tmp, opts) // the copy's extension chooses
	if err != nil {
		return nil, nil, pointio.SpooledError(ctx, err, tmp, describe(path))
	}
	return pts, ids, nil
}

// openPipe opens standard input ("-") or the special file at path, once
// and stoppably, buffered, with the extension its first bytes say
// (peekFormat); done closes what was opened.
func openPipe(ctx context.Context, path string) (*bufio.Reader, string, func(), error) {
	in, done := io.Reader(os.Stdin), func() {}
	if path != "-" {
		f, err := pointio.OpenSpecial(ctx, path)
		if err != nil {
			return nil, "", nil, err
		}
		in, done = f, func() { f.Close() }
	}
	br, ext := peekFormat(ctx, in)
	return br, ext, done, nil
}

// peekFormat is in, buffered, and the extension of the format its first
// bytes say when it is one read from its end (Parquet, Arrow, .npz); ""
// for the others (text, gzip, GeoJSON, .npy), read as a stream.
func peekFormat(ctx context.Context, in io.Reader) (*bufio.Reader, string) {
	// A read that returns when ctx is done: a signal stops a command
	// waiting on a quiet pipe. The buffer is the one the text readers
	// read from (readBuffered), so the bytes are copied into it once.
	br := bufio.NewReaderSize(pointio.CancelReader(ctx, in), csvio.ReaderBufferSize)
	return br, spooledExt(br)
}

// pipeChunks reads a pipe as a stream and closes it with the reader.
type pipeChunks struct {
	stream.ChunkReader
	done func()
}

func (p pipeChunks) Close() error {
	err := p.ChunkReader.Close()
	p.done()
	return err
}
