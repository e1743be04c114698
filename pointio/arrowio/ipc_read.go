package arrowio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/geoknn/geoknn/internal/parallel"
	"github.com/geoknn/geoknn/pointio"
	"github.com/paulmach/orb"
)

// The first bytes of Arrow IPC data: a file (Feather version 2) starts
// with IPCFileMagic; a stream has no magic, but its first message starts
// with the continuation marker, IPCStreamMagic.
const (
	IPCFileMagic   = "ARROW1"
	IPCStreamMagic = "\xff\xff\xff\xff"
)

// Handles reports whether ReadFileWith reads path: a Parquet file
// (IsParquet) or an Arrow IPC file (.arrow, .feather, .ipc, or one
// that starts as Arrow files do).
func Handles(path string) bool {
	if IsParquet(path) {
		return true
	}
	return isIPC(path)
}

func isIPC(path string) bool {
	if filepath.Ext(path) == "" {
		return pointio.StartsWith(path, IPCFileMagic)
	}
	return pointio.FormatByExt(path) == pointio.FormatArrow
}

// ReadFileWith reads the points of a Parquet or Arrow IPC file (Handles
// says which files), with the coordinate columns opts names.
func ReadFileWith(ctx context.Context, path string, opts pointio.ReadOptions) ([]orb.Point, error) {
	opts.IDColumn = ""
	pts, _, err := ReadFileIDs(ctx, path, opts)
	return pts, err
}

// ReadFileIDs is ReadFileWith that also returns the values, as text, of
// the column opts.IDColumn names (nil when it names none).
func ReadFileIDs(ctx context.Context, path string, opts pointio.ReadOptions) ([]orb.Point, []string, error) {
	if spoolable(path) {
		type read struct {
			pts []orb.Point
			ids []string
		}
		r, err := readSpooled(ctx, path, func(tmp string) (read, error) {
			pts, ids, err := ReadFileIDs(ctx, tmp, opts)
			return read{pts, ids}, err
		})
		return r.pts, r.ids, err
	}
	var ids []string
	var pts []orb.Point
	var err error
	if isIPC(path) {
		err = readIPC(ctx, path, opts, &ids, func(n int) { pts = make([]orb.Point, 0, n) },
			func(got []orb.Point) { pts = append(pts, got...) })
	} else {
		pts, err = readParquet(ctx, path, opts, &ids)
	}
	if err != nil {
		return nil, nil, err
	}
	return pts, ids, nil
}

// readIPC reads latitude and longitude columns (named as csvio.Read
// names them, float or double degrees) from an Arrow IPC file, or from an
// IPC stream when the file lacks the file format's magic. The points go to
// emit in order, a window of batches at a time: the file is never held
// whole.
func readIPC(ctx context.Context, path string, opts pointio.ReadOptions, ids *[]string, reserve func(rows int), emit func([]orb.Point)) (err error) {
	defer recoverCorruptAs(path, "Arrow IPC", &err)
	f, err := openIPCFile(path)
	if err != nil {
		return err
	}
	defer f.Close()
	rows, err := verifyIPC(f)
	if err != nil {
		return inputError(path, "corrupt Arrow IPC file", err)
	}
	// The batches' claim sizes the result, within two bytes a row of the
	// file (a crafted claim reserves no more; a file that compresses
	// further just grows the result).
	if fi, err := f.Stat(); err == nil {
		reserve(int(min(rows, fi.Size()/2, 1<<31)))
	}
	next, schema, err := ipcBatches(f)
	if err != nil {
		return inputError(path, "not a readable Arrow IPC file", err)
	}
	src, err := ipcSource(path, schema, opts)
	if err != nil {
		return err
	}
	next = checkedBatches(path, next)
	total := 0
	for {
		recs, rows, err := readWindow(ctx, path, next)
		if err == nil && rows > 0 {
			var pts []orb.Point
			if pts, err = src.decodeBatches(recs, total, rows); err == nil {
				emit(pts)
			}
		}
		for _, r := range recs {
			r.Release()
		}
		if err != nil {
			return err
		}
		if rows == 0 {
			break
		}
		total += rows
	}
	if total == 0 {
		return inputError(path, "no points", nil)
	}
	*ids = src.ids
	return nil
}

// checkedBatches is next that refuses a batch whose length is not its
// columns' (the field nodes'): the library would read the batch's length
// and drop, or invent, the rest without a word.
func checkedBatches(path string, next func() (arrow.RecordBatch, error)) func() (arrow.RecordBatch, error) {
	batch := 0
	return func() (arrow.RecordBatch, error) {
		rec, err := next()
		if err != nil {
			return rec, err
		}
		for c, col := range rec.Columns() {
			if int64(col.Len()) != rec.NumRows() {
				return nil, inputError(path, fmt.Sprintf("corrupt Arrow IPC file: batch %d has length %d, its column %q holds %d values",
					batch, rec.NumRows(), rec.ColumnName(c), col.Len()), nil)
			}
		}
		batch++
		return rec, nil
	}
}

// ipcWindowRows is about how many rows are read before they are decoded
// (on every core) and their batches released.
const ipcWindowRows = 1 << 21

// readWindow reads batches (kept: the caller releases them) until they
// hold ipcWindowRows rows or the input ends, and counts their rows.
func readWindow(ctx context.Context, path string, next func() (arrow.RecordBatch, error)) ([]arrow.RecordBatch, int, error) {
	var recs []arrow.RecordBatch
	total := 0
	for total < ipcWindowRows {
		if err := ctx.Err(); err != nil {
			return recs, 0, err
		}
		rec, err := next()
		if err == io.EOF {
			break
		}
		var ie *pointio.InputError
		if errors.As(err, &ie) {
			return recs, 0, err
		}
		if err != nil {
			return recs, 0, inputError(path, "corrupt Arrow IPC file", err)
		}
		rec.Retain() // valid past the reader's next batch
		recs = append(recs, rec)
		total += int(rec.NumRows())
	}
	return recs, total, nil
}

// ipcPiece is a range of rows of one batch, decoded on its own.
type ipcPiece struct {
	rec    arrow.RecordBatch
	first  int // the batch's first row in the file
	lo, hi int // rows of the batch
}

// decodeBatches decodes the points of batches that hold rows rows, the
// first of them row first of the file, (and appends their ids to src.ids)
// on every core, in pieces of at most 1<<16 rows; the lowest bad row is
// the one reported.
func (src *columnSource) decodeBatches(recs []arrow.RecordBatch, first, rows int) ([]orb.Point, error) {
	const pieceRows = 1 << 16
	base := first
	var pieces []ipcPiece
	for _, rec := range recs {
		n := int(rec.NumRows())
		for lo := 0; lo < n; lo += pieceRows {
			pieces = append(pieces, ipcPiece{rec: rec, first: first, lo: lo, hi: min(n, lo+pieceRows)})
		}
		first += n
	}
	pts := make([]orb.Point, rows)
	if src.id != "" {
		src.ids = append(src.ids, make([]string, rows)...)
	}
	errs := make([]error, len(pieces))
	parallel.Blocks(len(pieces), 1, 0, func(_, k, _ int) {
		defer recoverCorruptAs(src.path, "Arrow IPC", &errs[k])
		p := pieces[k]
		errs[k] = src.decodePiece(p, pts[p.first-base+p.lo:p.first-base+p.hi])
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return pts, nil
}

// decodePiece decodes a piece's points into dst.
func (src *columnSource) decodePiece(p ipcPiece, dst []orb.Point) error {
	n := p.hi - p.lo
	col := func(name string) *arrow.Chunked {
		idx := p.rec.Schema().FieldIndices(name)
		c := array.NewSlice(p.rec.Column(idx[0]), int64(p.lo), int64(p.hi))
		defer c.Release()
		return arrow.NewChunked(c.DataType(), []arrow.Array{c})
	}
	at := int64(p.first + p.lo)
	if src.id != "" {
		if err := src.idsOf(col(src.id), at, n); err != nil {
			return err
		}
	}
	if err := src.decodeFloats(col(src.lat), "lat", at, dst, func(p *orb.Point, v float64) { p[1] = v }); err != nil {
		return err
	}
	return src.decodeFloats(col(src.lon), "lon", at, dst, func(p *orb.Point, v float64) { p[0] = v })
}

// openIPCFile opens the Arrow IPC file at path; a special file (which
// this package's callers copy first) is refused rather than waited on.
func openIPCFile(path string) (*os.File, error) {
	if err := notSpecial(path); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read points: %w", err)
	}
	return f, nil
}

// ipcBatches opens the file or stream format and returns its batches one
// by one (io.EOF after the last).
func ipcBatches(f *os.File) (func() (arrow.RecordBatch, error), *arrow.Schema, error) {
	alloc := capped(allocLimit(f))
	head := make([]byte, len(IPCFileMagic))
	if _, err := io.ReadFull(f, head); err == nil && string(head) == IPCFileMagic {
		r, err := ipc.NewFileReader(f, ipc.WithAllocator(alloc))
		if err != nil {
			return nil, nil, err
		}
		i := 0
		return func() (arrow.RecordBatch, error) {
			if i == r.NumRecords() {
				return nil, io.EOF
			}
			i++
			return r.RecordBatch(i - 1)
		}, r.Schema(), nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, nil, err
	}
	r, err := ipc.NewReader(f, ipc.WithAllocator(alloc))
	if err != nil {
		return nil, nil, err
	}
	return func() (arrow.RecordBatch, error) {
		if r.Next() {
			return r.RecordBatch(), nil
		}
		if err := r.Err(); err != nil {
			return nil, err
		}
		return nil, io.EOF
	}, r.Schema(), nil
}

func ipcSource(path string, schema *arrow.Schema, opts pointio.ReadOptions) (*columnSource, error) {
	var names []string
	for _, f := range schema.Fields() {
		names = append(names, f.Name)
	}
	latCol, lonCol, err := pointio.LatLonColumns(path, names, opts)
	if err != nil {
		return nil, err
	}
	src := &columnSource{path: path, columns: names, lat: names[latCol], lon: names[lonCol]}
	return src, src.findID(opts.IDColumn)
}

// allocLimit is the largest buffer an IPC file of f's size can need:
// compressed bodies expand, so 64 times the file, and at least 64 MiB.
func allocLimit(f *os.File) int64 {
	size := int64(0)
	if fi, err := f.Stat(); err == nil {
		size = fi.Size()
	}
	return max(64*size, 64<<20)
}
