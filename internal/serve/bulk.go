package serve

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/internal/parallel"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/stream"
)

// A bulk request (an Arrow body of many points) is answered in buffers
// kept from one bulk request to the next, of two kinds. Its body is read
// into a request buffer, which later holds the answer's columns as they
// are sent back; its points in radians and the engine's answers live in
// an engine slot, page-locked once on GPUs so that the engine copies
// straight from and into them. A request holds a slot only from its
// conversion to its answer's columns: its upload and download are socket
// copies that can take longer than the GPUs' work (2^20 points on
// loopback, 2 cores: 6-11 and 4-7 ms; the GPUs' query on two H200s:
// 3.5 ms), and slots held through them would keep other requests from
// an idle engine. Fresh
// buffers cost more than the work (a million points' are 40 MiB of pages
// to fault in and clear). A few slots bound the pinned memory, a byte
// budget the request buffers in use (as many again are kept for reuse).

// bulkMin is the smallest body (bytes) answered in a bulk slot: smaller
// ones are cheap to answer in fresh memory and must not wait for a slot.
const bulkMin = 64 << 10

// bulkBlock is the points converted a goroutine at a time.
const bulkBlock = 1 << 15

// bulkSlot is one bulk request's engine buffers.
type bulkSlot struct {
	lat, lon []float64 // radians
	res      geoknn.Result
	unpins   []func() error // of lat, lon and res, pinned together
}

// bulkPool hands out the slots, at most one request each.
type bulkPool struct {
	mu     sync.Mutex
	free   []*bulkSlot
	sem    chan struct{}
	closed bool
}

func newBulkPool(slots int) *bulkPool {
	p := &bulkPool{sem: make(chan struct{}, slots)}
	for range slots {
		p.free = append(p.free, &bulkSlot{})
	}
	return p
}

// get waits for a free slot, or ctx's end.
func (p *bulkPool) get(ctx context.Context) (*bulkSlot, error) {
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctxErr(ctx)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		<-p.sem
		return nil, errDraining
	}
	s := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	return s, nil
}

// put gives s back; after close its memory is unpinned at once.
func (p *bulkPool) put(s *bulkSlot) {
	p.mu.Lock()
	closed := p.closed
	p.free = append(p.free, s)
	p.mu.Unlock()
	if closed {
		_ = s.unpin()
	}
	<-p.sem
}

// close unpins the free slots' memory (and makes put unpin the others'),
// before the engine that pinned it closes.
func (p *bulkPool) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	var errs []error
	for _, s := range p.free {
		errs = append(errs, s.unpin())
	}
	return errors.Join(errs...)
}

func (s *bulkSlot) unpin() error {
	var errs []error
	for _, u := range s.unpins {
		errs = append(errs, u())
	}
	s.unpins = nil
	return errors.Join(errs...)
}

// grow makes room for n points and their answers, pinned for x's engine
// (which every version of the references shares) when it runs on GPUs.
func (s *bulkSlot) grow(n int, x *geoknn.Index) {
	if cap(s.lat) >= n {
		return
	}
	_ = s.unpin() // memory that could not be unpinned is simply dropped
	s.lat, s.lon = parallel.Touched[float64](n), parallel.Touched[float64](n)
	s.res = geoknn.Result{Index: parallel.Touched[uint32](n), DistanceRad: parallel.Touched[float32](n)}
	// A range that cannot be pinned is copied through the engine's
	// staging, as any caller's memory is.
	if u, err := x.Pin(geoknn.Radians64(s.lat, s.lon)); err == nil {
		s.unpins = append(s.unpins, u)
	}
	if u, err := x.PinResult(&s.res); err == nil {
		s.unpins = append(s.unpins, u)
	}
}

// toRadians checks the degrees lat, lon and writes them in radians to
// dlat, dlon (as long), on every core; the error is the first point's.
func toRadians(dlat, dlon, lat, lon []float64) error {
	n := len(lat)
	errs := make([]error, (n+bulkBlock-1)/bulkBlock)
	parallel.Blocks(n, bulkBlock, 0, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			la, ln := lat[i], lon[i]
			// The common case in one test (false for NaN too); the
			// refusal's message is checkDegrees's.
			if !(la >= -90 && la <= 90 && ln >= -180 && ln <= 360) {
				errs[i/bulkBlock] = checkDegrees(i, la, ln)
				return
			}
			dlat[i], dlon[i] = la*degToRad, wrapLon(ln)*degToRad
		}
	})
	return firstErr(errs)
}

func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// readBulk reads and decodes an Arrow query's body into rb: its
// columns are slices of rb's memory.
func (s *Server) readBulk(r *http.Request, rb *requestBuf) (arrowColumns, error) {
	data, err := rb.readBody(r)
	if err != nil {
		return arrowColumns{}, err
	}
	cols, err := decodeArrow(data, s.cfg.MaxPoints, s.cfg.MaxBodyBytes, false)
	if err == nil && len(cols.lon) != len(cols.lat) {
		err = fieldErr("lon", strconv.Itoa(len(cols.lon))+" longitudes for "+strconv.Itoa(len(cols.lat))+" latitudes")
	}
	return cols, err
}

// bulkQuery makes the query of cols: its points in the slot's radians
// (grown and pinned for x's engine), its options from the URL.
func (s *Server) bulkQuery(r *http.Request, k endpoint, slot *bulkSlot, cols arrowColumns, x *geoknn.Index) (*query, error) {
	n := len(cols.lat)
	slot.grow(n, x)
	q := &query{lat: slot.lat[:n], lon: slot.lon[:n]}
	if err := toRadians(q.lat, q.lon, cols.lat, cols.lon); err != nil {
		return nil, err
	}
	kk, maxM, radiusM, list, err := urlOptions(r)
	if err != nil {
		return nil, err
	}
	return q, s.finish(q, k, kk, maxM, radiusM, list)
}

// bulk answers an Arrow query of a body large enough for a slot. A
// nearest query larger than a batch goes to the engine at once, into the
// slot's answers, copied to the request buffer before they are sent;
// others are answered as any query is, from the slot's points. The slot
// is given back before the answer is sent. The query timeout bounds the
// waits for buffers and slots too; the references are held only once a
// slot is (a slow upload or a wait for a slot keeps no old version
// alive).
func (s *Server) bulk(w http.ResponseWriter, r *http.Request, k endpoint) error {
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.QueryTimeout)
	defer cancel()
	rb, err := s.requestBufs.get(ctx, int(r.ContentLength))
	if err != nil {
		return err
	}
	defer s.requestBufs.put(rb)
	cols, err := s.readBulk(r, rb)
	if err != nil {
		return err
	}
	slot, err := s.bulkPool.get(ctx)
	if err != nil {
		return err
	}
	putSlot := sync.OnceFunc(func() { s.bulkPool.put(slot) })
	defer putSlot()
	snap := s.store.acquire()
	if snap == nil {
		return errDraining
	}
	defer snap.release()
	q, err := s.bulkQuery(r, k, slot, cols, snap.index)
	if err != nil {
		return err
	}
	if q.kind() != stream.KindNearest || len(q.lat) <= s.cfg.BatchPoints {
		if len(q.lat) <= s.cfg.BatchPoints {
			// Batched: a job its client has given up on stays queued,
			// and must not read the slot once the next request has it.
			q.lat, q.lon = slices.Clone(q.lat), slices.Clone(q.lon)
		}
		a, err := s.answerOf(r, q)
		putSlot() // the answer is its own memory
		if err != nil {
			return err
		}
		return s.send(w, r, q, a, true, false)
	}
	a, err := nearestInto(ctx, snap, q, &slot.res)
	if err != nil {
		return err
	}
	s.m.batch(1, len(q.lat))
	s.m.answered(len(q.lat), a.engine)
	index, metres, err := s.requestBufs.answer(ctx, rb, a.index, a.dist)
	putSlot() // the answer is the request buffer's now
	if err != nil {
		return err
	}
	w.Header().Set("Geoknn-Reference-Version", strconv.FormatUint(snap.version, 10))
	return s.sendWithin(w, func() error { return writeNearestArrow(w, snap, index, metres) })
}

// writeNearestArrow writes a nearest answer (ref_index[, ref_id],
// distance_m, as writeAnswerArrow) from the answer's own memory, with its
// Content-Length, in a few large writes.
func writeNearestArrow(w http.ResponseWriter, snap *snapshot, index []uint32, metres []float64) error {
	fields := []arrow.Field{{Name: "ref_index", Type: arrow.PrimitiveTypes.Uint32}}
	cols := []arrow.Array{fixedColumn(arrow.PrimitiveTypes.Uint32, len(index), bytesOf(index))}
	if snap.ids != nil {
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		defer sb.Release()
		sb.Reserve(len(index))
		for _, i := range index {
			sb.Append(snap.ids[i])
		}
		fields = append(fields, arrow.Field{Name: "ref_id", Type: arrow.BinaryTypes.String})
		cols = append(cols, sb.NewArray())
	}
	fields = append(fields, arrow.Field{Name: "distance_m", Type: arrow.PrimitiveTypes.Float64})
	cols = append(cols, fixedColumn(arrow.PrimitiveTypes.Float64, len(metres), bytesOf(metres)))
	md := arrow.NewMetadata([]string{"reference_version"}, []string{strconv.FormatUint(snap.version, 10)})
	schema := arrow.NewSchema(fields, &md)
	rec := array.NewRecordBatch(schema, cols, int64(len(index)))
	defer rec.Release()
	for _, c := range cols {
		c.Release()
	}
	// The stream is written twice: counted, then sent (writing it costs
	// no copy of the columns), so that the answer has a Content-Length
	// and is not chunked.
	var count pointio.CountingWriter
	if err := writeIPC(&count, schema, rec); err != nil {
		return err
	}
	w.Header().Set("Content-Type", arrowStreamType)
	w.Header().Set("Content-Length", strconv.FormatInt(int64(count), 10))
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := writeIPC(bw, schema, rec); err != nil {
		return ignoreWriteErr(err)
	}
	return ignoreWriteErr(bw.Flush())
}

func writeIPC(w io.Writer, schema *arrow.Schema, rec arrow.RecordBatch) error {
	iw := ipc.NewWriter(w, ipc.WithSchema(schema), ipc.WithAllocator(memory.DefaultAllocator))
	if err := iw.Write(rec); err != nil {
		return err
	}
	return iw.Close()
}

// fixedColumn is an Arrow column of n fixed-width values held in b (not
// copied).
func fixedColumn(t arrow.DataType, n int, b []byte) arrow.Array {
	d := array.NewData(t, n, []*memory.Buffer{nil, memory.NewBufferBytes(b)}, nil, 0, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// bytesOf is s's memory as bytes.
func bytesOf[T uint32 | float64](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}
