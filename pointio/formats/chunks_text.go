package formats

import (
	"bufio"
	"context"
	"errors"
	"io"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/csvio"
	"github.com/geoknn/geoknn/pointio/numpyio"
	"github.com/geoknn/geoknn/stream"
	"github.com/paulmach/orb"
)

// openFileChunks opens path (not standard input) for reading in chunks
// of about chunkRows points (0: pointio.DefaultChunkRows): CSV and
// gzip-compressed CSV by blocks, .npy by row ranges (Fortran order
// whole), GeoJSON and .npz whole and then handed out in chunks. Parquet
// and Arrow files are opened by package arrowio's OpenChunks.
func openFileChunks(ctx context.Context, path string, opts pointio.ReadOptions, chunkRows int) (stream.ChunkReader, error) {
	if chunkRows <= 0 {
		chunkRows = pointio.DefaultChunkRows
	}
	switch formatOf(path) {
	case pointio.FormatNPY:
		if opts.IDColumn == "" {
			return numpyio.OpenNPYFile(path, opts.Radians, chunkRows)
		}
	case pointio.FormatGeoJSON, pointio.FormatNPZ:
		return pointio.ReadWholeChunks(ctx, path, opts, chunkRows, ReadFileRadians)
	}
	return openTextChunks(ctx, path, opts, chunkRows)
}

// textPiece is what the text reader hands on: points and their ids, or
// the reading's end (err, io.EOF when it ended well).
type textPiece struct {
	pts []orb.Point
	ids []string
	err error
}

// textChunks reads CSV (gzip-compressed or not, a file or standard input)
// in a goroutine of its own through the whole-file reader's block
// parser, whose blocks come here as they are parsed.
type textChunks struct {
	pieces  chan textPiece
	cancel  context.CancelFunc
	rows    int
	base    int64
	pending textPiece // a piece only partly handed out
	done    error
}

func openTextChunks(ctx context.Context, path string, opts pointio.ReadOptions, chunkRows int) (stream.ChunkReader, error) {
	in, size, err := openInput(ctx, path)
	if err != nil {
		return nil, err
	}
	return startTextChunks(func(ctx context.Context, sink csvio.Sink, ids *[]string) ([]orb.Point, error) {
		defer in.Close()
		return readFrom(ctx, in, path, size, opts, sink, ids)
	}, opts, chunkRows), nil
}

// OpenTextChunks reads CSV, gzip-compressed CSV or GeoJSON (whole) from r
// (standard input, say; named name in errors) in chunks of chunkRows
// points (0: DefaultChunkRows), as OpenChunks reads a file.
func OpenTextChunks(r io.Reader, name string, opts pointio.ReadOptions, chunkRows int) stream.ChunkReader {
	return startTextChunks(func(ctx context.Context, sink csvio.Sink, ids *[]string) ([]orb.Point, error) {
		return readFrom(ctx, r, name, 0, opts, sink, ids)
	}, opts, chunkRows)
}

// openBufferedChunks is OpenTextChunks of br, which stops once the
// reading is closed or ctx is done itself (a pipe read through
// pointio.CancelReader under a context its Close cancels), read where it
// is buffered (readBuffered).
func openBufferedChunks(br *bufio.Reader, name string, opts pointio.ReadOptions, chunkRows int) stream.ChunkReader {
	return startTextChunks(func(ctx context.Context, sink csvio.Sink, ids *[]string) ([]orb.Point, error) {
		return readBuffered(ctx, br, name, 0, opts, sink, ids)
	}, opts, chunkRows)
}

// textReading reads an input to its end (the text readers' readFrom),
// a CSV input's points handed to sink as they are parsed.
type textReading func(ctx context.Context, sink csvio.Sink, ids *[]string) ([]orb.Point, error)

// startTextChunks starts read on a goroutine of its own.
func startTextChunks(read textReading, opts pointio.ReadOptions, chunkRows int) stream.ChunkReader {
	if chunkRows <= 0 {
		chunkRows = pointio.DefaultChunkRows
	}
	rctx, cancel := context.WithCancel(context.Background())
	t := &textChunks{pieces: make(chan textPiece, 2), cancel: cancel, rows: chunkRows}
	go t.produce(rctx, read, opts)
	return t
}

// produce reads the input to its end, handing its points on in pieces.
func (t *textChunks) produce(ctx context.Context, read textReading, opts pointio.ReadOptions) {
	send := func(p textPiece) {
		select {
		case t.pieces <- p:
		case <-ctx.Done():
		}
	}
	wantIDs := opts.IDColumn != ""
	var held []orb.Point
	sink := csvio.Sink{
		Points: func(pts []orb.Point) {
			if wantIDs {
				held = pts
				return
			}
			send(textPiece{pts: pts})
		},
		IDs: func(ids []string) { send(textPiece{pts: held, ids: ids}) },
	}
	var ids []string
	pts, err := read(ctx, sink, &ids)
	if err == nil && len(pts) > 0 {
		send(textPiece{pts: pts, ids: ids}) // GeoJSON and .npy from a stream: whole
	}
	if err == nil {
		err = io.EOF
	}
	send(textPiece{err: err})
}

// Next gathers pieces until the chunk holds its points (t.rows, the
// first chunks fewer: pointio.RampedRows) or the input ends.
func (t *textChunks) Next(ctx context.Context, dst stream.Chunk) (stream.Chunk, error) {
	if t.done != nil {
		return stream.Chunk{}, t.done
	}
	c := stream.Chunk{Base: t.base, Lat: dst.Lat[:0], Lon: dst.Lon[:0], IDs: dst.IDs[:0]}
	want := pointio.RampedRows(t.rows, t.base)
	for c.Len() < want {
		if len(t.pending.pts) == 0 {
			p, err := t.receive(ctx)
			if err != nil {
				t.done = err
				break
			}
			t.pending = p
		}
		c = t.take(c, want)
	}
	if c.Len() == 0 && t.done != nil {
		return stream.Chunk{}, t.done
	}
	if t.done != nil && t.done != io.EOF {
		return stream.Chunk{}, t.done // nothing of a failed input is handed on
	}
	if len(c.IDs) == 0 {
		c.IDs = nil
	}
	t.base += int64(c.Len())
	return c, nil
}

// receive waits for the next piece with points, or the end.
func (t *textChunks) receive(ctx context.Context) (textPiece, error) {
	for {
		select {
		case p := <-t.pieces:
			if p.err != nil {
				return textPiece{}, p.err
			}
			if len(p.pts) > 0 {
				return p, nil
			}
		case <-ctx.Done():
			return textPiece{}, ctx.Err()
		}
	}
}

// take moves up to the room left in c, a chunk of want points, from the
// pending piece into c.
func (t *textChunks) take(c stream.Chunk, want int) stream.Chunk {
	n := min(want-c.Len(), len(t.pending.pts))
	c.Lat, c.Lon = pointio.AppendRadiansParallel(c.Lat, c.Lon, t.pending.pts[:n])
	t.pending.pts = t.pending.pts[n:]
	if t.pending.ids != nil {
		c.IDs = append(c.IDs, t.pending.ids[:n]...)
		t.pending.ids = t.pending.ids[n:]
	}
	return c
}

func (t *textChunks) Rows() int64 { return -1 }

// Close stops the reading goroutine (it drops what it still parses).
func (t *textChunks) Close() error {
	t.cancel()
	if t.done == nil {
		t.done = errors.New("pointio: chunk reader closed")
	}
	return nil
}
