package arrowio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/geoknn/geoknn/internal/parallel"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/stream"
	"github.com/paulmach/orb"
)

// parquetChunks reads a Parquet file's row groups in order, a chunk of
// consecutive groups at a time (at least rows points, a group whole),
// every group decoded by one of several readers straight into its place
// in the chunk's radian columns. At most ahead chunks are read ahead of
// Next, so the memory held is a few chunks whatever the file's size.
//
// A chunk's groups are read side by side, not a reader a chunk: a GPU
// chunk of 2^23 points is 8 of pyarrow's groups, and one reader a group
// keeps every core busy where a reader a chunk (or readers feeding one
// gatherer, which copied every point once more) left the stream waiting
// on its reading.
type parquetChunks struct {
	n      int64
	chunks int // planned; next is the one Next returns
	next   int
	ready  chan *pendingChunk // in file order
	// free has the columns handed back through Next, to fill again: one
	// each call, empty from a caller with none yet (a new slot), which
	// lets the reader make columns for one more chunk.
	free chan stream.Chunk
	// spent is the slots of Next calls still to come whose columns were
	// made at the start (startSlots).
	spent  int
	cancel context.CancelFunc
	done   error
}

// chunkPlan is one chunk: row groups [g0, g1), of which rows [lo, hi) of
// the file are kept (a rank's range may cut the first and last).
type chunkPlan struct {
	g0, g1 int
	lo, hi int64
}

// pendingChunk is a chunk being read: done is closed when its last group
// is in, errs holds each group's error.
type pendingChunk struct {
	c    stream.Chunk
	plan chunkPlan
	errs []error
	left int
	mu   sync.Mutex
	done chan struct{}
}

// groupTask is one row group to decode into its chunk.
type groupTask struct {
	pc *pendingChunk
	g  int
}

// groupReaders bounds the readers of a file: each holds a group's Arrow
// table (2^20 points are 16 MB) while it decodes.
const groupReaders = 16

// chunksAhead is how many chunks are read ahead of the one Next returns.
const chunksAhead = 2

// startSlots is how many of the first Next calls' slots are made before
// them, so that the file's first chunksAhead+startSlots chunks are read
// while the caller gets ready (knn run opens its input as the engine
// starts, 0.3-0.6 s on GPUs). A stream's first calls bring a slot each
// (pipeline.Stream: three, one a stage), for which the reader would make
// columns then; it makes them at the start instead, and takes those
// calls' slots as already spent: the columns made in all are as many.
const startSlots = 3

// newParquetChunks starts reading groups [g0, g1) of src, rows [lo, hi),
// in chunks of at least rows points, with workers readers (0: half the
// cores, the other half for the query and the writer).
func newParquetChunks(src *columnSource, starts []int64, g0, g1 int, lo, hi int64, rows, workers int) *parquetChunks {
	if rows <= 0 {
		rows = pointio.DefaultChunkRows
	}
	if workers <= 0 {
		workers = min(max(runtime.GOMAXPROCS(0)/2, 1), groupReaders)
	}
	workers = max(1, min(workers, g1-g0))
	plans := planChunks(starts, g0, g1, lo, hi, rows)
	ctx, cancel := context.WithCancel(context.Background())
	p := &parquetChunks{n: hi - lo, chunks: len(plans), ready: make(chan *pendingChunk, len(plans)),
		free: make(chan stream.Chunk, len(plans)+1), spent: startSlots, cancel: cancel}
	tasks := make(chan groupTask, g1-g0)
	for range workers {
		go src.decodeGroups(ctx, starts, tasks)
	}
	go p.dispatch(ctx, src.id != "", plans, tasks)
	return p
}

// planChunks cuts groups [g0, g1) into chunks of at least rows points
// (the first ones smaller: pointio.RampedRows), keeping rows [lo, hi).
func planChunks(starts []int64, g0, g1 int, lo, hi int64, rows int) []chunkPlan {
	var plans []chunkPlan
	for g := g0; g < g1; {
		pl := chunkPlan{g0: g, g1: g + 1}
		from := max(starts[g], lo)
		want := int64(pointio.RampedRows(rows, from-lo))
		for pl.g1 < g1 && starts[pl.g1]-from < want {
			pl.g1++
		}
		pl.lo, pl.hi = max(starts[pl.g0], lo), min(starts[pl.g1], hi)
		if pl.hi > pl.lo {
			plans = append(plans, pl)
		}
		g = pl.g1
	}
	return plans
}

// dispatch hands out the chunks' groups in order, each chunk once it has
// columns: new ones for the first chunksAhead+startSlots, then those Next
// hands back.
func (p *parquetChunks) dispatch(ctx context.Context, ids bool, plans []chunkPlan, tasks chan<- groupTask) {
	defer close(tasks)
	made, most := 0, 0
	for _, pl := range plans {
		most = max(most, int(pl.hi-pl.lo))
	}
	for _, pl := range plans {
		var c stream.Chunk
		if made < chunksAhead+startSlots {
			made++
		} else {
			select {
			case c = <-p.free:
			case <-ctx.Done():
				return
			}
		}
		// Columns made for the largest chunk: the first chunks are smaller
		// (planChunks), and columns made to their size would be made
		// again for the later ones.
		n := int(pl.hi - pl.lo)
		c.Base, c.Lat, c.Lon, c.IDs = pl.lo, parallel.Grown(c.Lat, n, most), parallel.Grown(c.Lon, n, most), nil
		if ids {
			c.IDs = make([]string, n)
		}
		pc := &pendingChunk{c: c, plan: pl, errs: make([]error, pl.g1-pl.g0), left: pl.g1 - pl.g0, done: make(chan struct{})}
		p.ready <- pc // room for every chunk: never blocks
		for g := pl.g0; g < pl.g1; g++ {
			select {
			case tasks <- groupTask{pc, g}:
			case <-ctx.Done():
				return
			}
		}
	}
}

// decodeGroups decodes the tasks' groups on a reader of its own until
// there are none or ctx is done.
func (src *columnSource) decodeGroups(ctx context.Context, starts []int64, tasks <-chan groupTask) {
	rdr, fr, err := src.openGroups()
	if rdr != nil {
		defer rdr.Close()
	}
	var scratch groupScratch
	if err == nil {
		if scratch.pages = src.newCoordPages(rdr, fr); scratch.pages != nil {
			defer scratch.pages.Close()
		}
	}
	for t := range tasks {
		if err == nil {
			err = ctx.Err()
		}
		gerr := err
		if gerr == nil {
			gerr = src.decodeGroup(ctx, fr, t, starts, &scratch)
		}
		t.pc.finish(t.g, gerr)
	}
}

// finish records group g's outcome and closes done after the last.
func (pc *pendingChunk) finish(g int, err error) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.errs[g-pc.plan.g0] = err
	if pc.left--; pc.left == 0 {
		close(pc.done)
	}
}

// groupScratch is a reader's room for a group decoded whole when the
// chunk keeps part of it, or decoded through points (GeoParquet, float
// columns, nulls).
type groupScratch struct {
	pts      []orb.Point
	lat, lon []float64
	pages    *coordPages // nil: the coordinates are not columns it reads
}

// decodeGroup reads task t's row group, checked, into its place in the
// chunk.
func (src *columnSource) decodeGroup(ctx context.Context, fr *pqarrow.FileReader, t groupTask, starts []int64, s *groupScratch) (err error) {
	defer recoverCorruptGroup(src.path, t.g, &err)
	g, pl := t.g, t.pc.plan
	first, end := starts[g], starts[g+1]
	lo, hi := max(first, pl.lo), min(end, pl.hi)
	at := int(lo - pl.lo)
	c := t.pc.c
	if lo == first && hi == end {
		var ids []string
		if c.IDs != nil {
			ids = c.IDs[at : at+int(end-first)]
		}
		return src.readGroupRadians(ctx, fr, g, first, c.Lat[at:at+int(end-first)], c.Lon[at:at+int(end-first)], ids, s)
	}
	n := int(end - first)
	s.lat, s.lon = grow(s.lat[:0], n), grow(s.lon[:0], n)
	var ids []string
	if c.IDs != nil {
		ids = make([]string, n)
	}
	if err := src.readGroupRadians(ctx, fr, g, first, s.lat, s.lon, ids, s); err != nil {
		return err
	}
	a, b := int(lo-first), int(hi-first)
	copy(c.Lat[at:], s.lat[a:b])
	copy(c.Lon[at:], s.lon[a:b])
	if ids != nil {
		copy(c.IDs[at:], ids[a:b])
	}
	return nil
}

// readGroupRadians reads row group g (its first row is row first of the
// file) into lat and lon in radians, and ids: straight from its pages
// where s.pages reads them, else, or where the pages hold anything the
// page reader leaves alone (a null, a value out of range, an encoding it
// does not read), through arrow-go's reader, which reports bad input as
// it always has.
func (src *columnSource) readGroupRadians(ctx context.Context, fr *pqarrow.FileReader, g int, first int64, lat, lon []float64, ids []string, s *groupScratch) error {
	if s.pages != nil && s.pages.readGroup(g, lat, lon) == nil {
		return nil
	}
	tbl, err := readGroup(ctx, src.path, fr, src.leaves(fr.ParquetReader()), g)
	if err != nil {
		return err
	}
	defer tbl.Release()
	return src.groupRadians(tbl, first, lat, lon, ids, s)
}

// groupError is a row group that could not be read: never the end of the
// input, whatever the library's error wraps (a file cut short while it is
// read gives io.EOF or io.ErrUnexpectedEOF, which a stream would take for
// its end).
func groupError(path string, g int, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		err = errors.New(err.Error())
	}
	// arrow-go recovers some panics itself, a refused allocation's among
	// them: the file is corrupt (or the memory short), not the reader.
	if text, ok := strings.CutPrefix(err.Error(), "panic while reading: "); ok {
		if !strings.Contains(text, "of memory available") {
			text = "corrupt Parquet file: " + text
		}
		err = errors.New(text)
	}
	return inputError(path, fmt.Sprintf("row group %d", g), err)
}

// groupRadians decodes a row group's table (its first row is row first of
// the file) into lat and lon in radians, and ids, every point checked: a
// float64 column of no nulls straight from its values, any other column
// through points as the whole-file reader decodes them.
func (src *columnSource) groupRadians(tbl arrow.Table, first int64, lat, lon []float64, ids []string, s *groupScratch) error {
	ws := *src
	ws.base, ws.ids = first, ids
	n := len(lat)
	if ws.geometry == "" {
		latCol, lonCol := tableColumn(tbl, ws.lat), tableColumn(tbl, ws.lon)
		if plainFloats(latCol, n) && plainFloats(lonCol, n) {
			if ws.id != "" {
				if err := ws.idsOf(tableColumn(tbl, ws.id), first, n); err != nil {
					return err
				}
			}
			if err := ws.radiansOf(latCol, "lat", first, lat); err != nil {
				return err
			}
			return ws.radiansOf(lonCol, "lon", first, lon)
		}
	}
	s.pts = slices.Grow(s.pts[:0], n)[:n]
	if err := ws.decode(tbl, first, s.pts); err != nil {
		return err
	}
	for i, p := range s.pts {
		lat[i], lon[i] = p[1]*math.Pi/180, p[0]*math.Pi/180 // pointio.AppendRadians's operations
	}
	return nil
}

// tableColumn is the data of tbl's column name (nil: none).
func tableColumn(tbl arrow.Table, name string) *arrow.Chunked {
	idx := tbl.Schema().FieldIndices(name)
	if len(idx) == 0 {
		return nil
	}
	return tbl.Column(idx[0]).Data()
}

// plainFloats reports whether c is n float64 values with no nulls.
func plainFloats(c *arrow.Chunked, n int) bool {
	if c == nil || c.Len() != n {
		return false
	}
	for _, a := range c.Chunks() {
		if _, ok := a.(*array.Float64); !ok || a.NullN() > 0 {
			return false
		}
	}
	return true
}

// radiansOf converts a plain float64 column (plainFloats) of degrees to
// radians in dst, each value checked as decodeFloats checks it, with
// pointio.AppendRadians's operations (the same bits).
func (src *columnSource) radiansOf(c *arrow.Chunked, field string, first int64, dst []float64) error {
	limit := 90.0
	if field == "lon" {
		limit = 180
	}
	row := 0
	for _, a := range c.Chunks() {
		for _, v := range a.(*array.Float64).Float64Values() {
			if !(v >= -limit && v <= limit) {
				return src.valueError(first+int64(row), field, v, nil, limit)
			}
			dst[row] = v * math.Pi / 180
			row++
		}
	}
	return nil
}

// Next returns the next chunk, once every one of its groups is read;
// dst's columns are kept to fill again.
func (p *parquetChunks) Next(ctx context.Context, dst stream.Chunk) (stream.Chunk, error) {
	if p.done != nil {
		return stream.Chunk{}, p.done
	}
	if err := ctx.Err(); err != nil {
		p.done = err
		return stream.Chunk{}, err
	}
	if p.next == p.chunks {
		p.done = io.EOF
		return stream.Chunk{}, io.EOF
	}
	if p.spent > 0 {
		p.spent-- // this call's slot was made at the start; dst's columns, if any, are dropped
	} else {
		p.free <- stream.Chunk{Lat: dst.Lat[:0], Lon: dst.Lon[:0]} // room for one a call: never blocks
	}
	// A chunk given up on is gone: the reader stays stopped.
	var pc *pendingChunk
	select {
	case pc = <-p.ready:
	case <-ctx.Done():
		p.done = ctx.Err()
		return stream.Chunk{}, p.done
	}
	select {
	case <-pc.done:
	case <-ctx.Done():
		p.done = ctx.Err()
		return stream.Chunk{}, p.done
	}
	p.next++
	if err := firstError(pc.errs); err != nil {
		p.done = err
		p.cancel()
		return stream.Chunk{}, p.done
	}
	return pc.c, nil
}

// firstError is the first group's error: the one a whole-file read meets.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (p *parquetChunks) Rows() int64 { return p.n }

// Close stops the readers.
func (p *parquetChunks) Close() error {
	p.cancel()
	if p.done == nil {
		p.done = errors.New("arrowio: chunk reader closed")
	}
	p.drop()
	return nil
}

// drop lets go of the chunks read ahead and handed back so far: a
// closed reader keeps none of them once its dispatcher and decoders have
// stopped (the chunk they are on goes with them).
func (p *parquetChunks) drop() {
	for {
		select {
		case <-p.free:
		case <-p.ready:
		default:
			return
		}
	}
}
