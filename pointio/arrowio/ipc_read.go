package arrowio

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/geoknn/geoknn/pointio"
	"github.com/paulmach/orb"
)

// ipcMagic starts an Arrow IPC file (Feather version 2); a stream has none.
const ipcMagic = "ARROW1"

// Handles reports whether ReadFileWith reads path: a Parquet file
// (pointio.IsParquet) or an Arrow IPC file (.arrow, .feather, .ipc, or one
// that starts as Arrow files do).
func Handles(path string) bool {
	if pointio.IsParquet(path) {
		return true
	}
	return isIPC(path)
}

func isIPC(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".arrow", ".feather", ".ipc", ".arrows":
		return true
	case "":
		f, err := os.Open(path)
		if err != nil {
			return false
		}
		defer f.Close()
		head := make([]byte, len(ipcMagic))
		_, err = io.ReadFull(f, head)
		return err == nil && string(head) == ipcMagic
	}
	return false
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
	var ids []string
	var pts []orb.Point
	var err error
	if isIPC(path) {
		pts, err = readIPC(ctx, path, opts, &ids)
	} else {
		pts, err = readParquet(ctx, path, opts, &ids)
	}
	if err != nil {
		return nil, nil, err
	}
	return pts, ids, nil
}

// readIPC reads latitude and longitude columns (named as pointio.ReadCSV
// names them, float or double degrees) from an Arrow IPC file, or from an
// IPC stream when the file lacks the file format's magic.
func readIPC(ctx context.Context, path string, opts pointio.ReadOptions, ids *[]string) (pts []orb.Point, err error) {
	defer func() {
		if err != nil {
			pts = nil
		}
	}()
	defer recoverCorrupt(path, &err)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read points: %w", err)
	}
	defer f.Close()
	next, schema, err := ipcBatches(f)
	if err != nil {
		return nil, inputError(path, "not a readable Arrow IPC file", err)
	}
	src, err := ipcSource(path, schema, opts)
	if err != nil {
		return nil, err
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rec, err := next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, inputError(path, "corrupt Arrow IPC file", err)
		}
		if pts, err = src.appendBatch(pts, rec); err != nil {
			return nil, err
		}
	}
	if len(pts) == 0 {
		return nil, inputError(path, "no points", nil)
	}
	*ids = src.ids
	return pts, nil
}

// ipcBatches opens the file or stream format and returns its batches one
// by one (io.EOF after the last).
func ipcBatches(f *os.File) (func() (arrow.RecordBatch, error), *arrow.Schema, error) {
	alloc := cappedAllocator{limit: allocLimit(f)}
	head := make([]byte, len(ipcMagic))
	if _, err := io.ReadFull(f, head); err == nil && string(head) == ipcMagic {
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

// appendBatch appends a record batch's points to pts, checking each.
func (src *columnSource) appendBatch(pts []orb.Point, rec arrow.RecordBatch) ([]orb.Point, error) {
	first := len(pts)
	n := int(rec.NumRows())
	pts = append(pts, make([]orb.Point, n)...)
	col := func(name string) *arrow.Chunked {
		idx := rec.Schema().FieldIndices(name)
		c := array.NewSlice(rec.Column(idx[0]), 0, int64(n))
		defer c.Release()
		return arrow.NewChunked(c.DataType(), []arrow.Array{c})
	}
	dst := pts[first:]
	if src.id != "" {
		src.ids = append(src.ids, make([]string, n)...)
		if err := src.idsOf(col(src.id), int64(first), n); err != nil {
			return nil, err
		}
	}
	if err := src.decodeFloats(col(src.lat), "lat", int64(first), dst, func(p *orb.Point, v float64) { p[1] = v }); err != nil {
		return nil, err
	}
	if err := src.decodeFloats(col(src.lon), "lon", int64(first), dst, func(p *orb.Point, v float64) { p[0] = v }); err != nil {
		return nil, err
	}
	return pts, nil
}

// cappedAllocator refuses, by a panic that recoverCorrupt turns into an
// error, any single allocation above limit: a corrupt message header can
// claim a body of gigabytes, which the Go allocator would try to map and
// the process could not survive.
type cappedAllocator struct {
	limit int
}

func (a cappedAllocator) Allocate(size int) []byte {
	if size > a.limit {
		panic(fmt.Sprintf("a buffer of %d bytes claimed, more than the file could hold", size))
	}
	return memory.DefaultAllocator.Allocate(size)
}

func (a cappedAllocator) Reallocate(size int, b []byte) []byte {
	if size > a.limit {
		panic(fmt.Sprintf("a buffer of %d bytes claimed, more than the file could hold", size))
	}
	return memory.DefaultAllocator.Reallocate(size, b)
}

func (a cappedAllocator) Free(b []byte) { memory.DefaultAllocator.Free(b) }

// allocLimit is the largest buffer an IPC file of f's size can need:
// compressed bodies expand, so 64 times the file, and at least 64 MiB.
func allocLimit(f *os.File) int {
	size := int64(0)
	if fi, err := f.Stat(); err == nil {
		size = fi.Size()
	}
	return int(min(max(64*size, 64<<20), 1<<40))
}
