package serve

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/geoknn/geoknn/pointio/arrowio"
	"github.com/geoknn/geoknn/stream"
)

// cappedAllocator refuses, by a panic that readArrow turns into an error,
// one allocation above limit: a corrupt message header can claim a body of
// gigabytes, which a request must not make the server map.
type cappedAllocator struct{ limit int }

func (a cappedAllocator) Allocate(size int) []byte {
	if size > a.limit {
		panic(errCorrupt)
	}
	return memory.DefaultAllocator.Allocate(size)
}

func (a cappedAllocator) Reallocate(size int, b []byte) []byte {
	if size > a.limit {
		panic(errCorrupt)
	}
	return memory.DefaultAllocator.Reallocate(size, b)
}

func (cappedAllocator) Free(b []byte) { memory.DefaultAllocator.Free(b) }

var errCorrupt = badRequest("body", "not a readable Arrow IPC stream")

// arrowColumns are the columns a request's Arrow stream holds, read whole.
type arrowColumns struct {
	lat, lon        []float64
	ids             []string
	hasIDs          bool
	latC, lonC, idC int // the columns' places in the schema
}

// readArrow reads an Arrow IPC stream of lat and lon (degrees, float64 or
// float32; also "latitude", "longitude") and, with wantIDs, an id column
// (strings or integers), refusing more than maxPoints rows: decodeArrow
// of the whole body.
func readArrow(body io.Reader, maxPoints int, limit int64, wantIDs bool) (arrowColumns, error) {
	// The whole stream first, its size bounded by the body limit.
	data, err := io.ReadAll(body)
	if err != nil {
		return arrowColumns{}, err
	}
	return decodeArrow(data, maxPoints, limit, wantIDs)
}

// decodeArrow decodes the Arrow IPC stream in data. Its columns are read
// in place where they can be (one batch of float64 columns: the answer's
// lat and lon are slices of data, so data must outlive them), copied
// otherwise. The decoder is arrow-go's, fed the messages as slices of
// data, their metadata verified first (arrow-go trusts a schema's claimed
// field count); a panic on a corrupt stream becomes a 400.
func decodeArrow(data []byte, maxPoints int, limit int64, wantIDs bool) (cols arrowColumns, err error) {
	defer func() {
		if p := recover(); p != nil {
			cols, err = arrowColumns{}, errCorrupt
		}
	}()
	msgs, err := arrowio.IPCStreamMessages(data)
	if err != nil {
		return cols, badRequest("body", "not a readable Arrow IPC stream: "+err.Error())
	}
	r, err := ipc.NewReaderFromMessageReader(&bytesMessages{msgs: msgs}, ipc.WithAllocator(cappedAllocator{limit: int(min(limit, 1<<40))}))
	if err != nil {
		return cols, badRequest("body", "not an Arrow IPC stream: "+err.Error())
	}
	defer r.Release()
	if err := cols.locate(r.Schema(), wantIDs); err != nil {
		return cols, err
	}
	for r.Next() {
		if err := cols.add(r.RecordBatch(), maxPoints); err != nil {
			return cols, err
		}
	}
	if err := r.Err(); err != nil {
		return cols, badRequest("body", "reading the Arrow IPC stream: "+err.Error())
	}
	return cols, nil
}

// bytesMessages is an ipc.MessageReader of messages already in memory:
// their bodies are not copied (arrow-go's own reader copies each into a
// fresh buffer, 16 MiB for a million points).
type bytesMessages struct {
	msgs []arrowio.IPCMessage
	next int
}

func (m *bytesMessages) Message() (*ipc.Message, error) {
	if m.next >= len(m.msgs) {
		return nil, io.EOF
	}
	msg := m.msgs[m.next]
	m.next++
	return ipc.NewMessage(memory.NewBufferBytes(msg.Meta), memory.NewBufferBytes(msg.Body)), nil
}

func (m *bytesMessages) Retain()  {}
func (m *bytesMessages) Release() {}

// locate finds the columns in schema.
func (cols *arrowColumns) locate(schema *arrow.Schema, wantIDs bool) error {
	cols.latC, cols.lonC, cols.idC = column(schema, "lat", "latitude"), column(schema, "lon", "longitude", "lng"), -1
	if cols.latC < 0 {
		return fieldErr("lat", "no lat (or latitude) column in the Arrow stream")
	}
	if cols.lonC < 0 {
		return fieldErr("lon", "no lon (or longitude) column in the Arrow stream")
	}
	if wantIDs {
		cols.idC = column(schema, "id")
		cols.hasIDs = cols.idC >= 0
	}
	return nil
}

// add takes a record batch's columns.
func (cols *arrowColumns) add(rec arrow.RecordBatch, maxPoints int) (err error) {
	if len(cols.lat)+int(rec.NumRows()) > maxPoints {
		return tooLarge("lat", fmt.Sprintf("more than the %d points a request takes (--max-points)", maxPoints))
	}
	if cols.lat, err = appendFloats(cols.lat, rec.Column(cols.latC), "lat"); err != nil {
		return err
	}
	if cols.lon, err = appendFloats(cols.lon, rec.Column(cols.lonC), "lon"); err != nil {
		return err
	}
	if cols.idC >= 0 {
		cols.ids, err = appendIDs(cols.ids, rec.Column(cols.idC))
	}
	return err
}

func isMaxBytes(err error) bool {
	var mb *http.MaxBytesError
	return err != nil && asMaxBytes(err, &mb)
}

// column is the index of the first field named one of names (any case).
func column(s *arrow.Schema, names ...string) int {
	for i, f := range s.Fields() {
		for _, n := range names {
			if strings.EqualFold(f.Name, n) {
				return i
			}
		}
	}
	return -1
}

func appendFloats(dst []float64, a arrow.Array, name string) ([]float64, error) {
	if a.NullN() > 0 {
		return dst, fieldErr(name, "null values: every point needs both coordinates")
	}
	switch c := a.(type) {
	case *array.Float64:
		v := c.Float64Values()
		if dst == nil {
			// The first batch's column, read in place: capped, so that a
			// later batch's append copies it instead of writing over what
			// follows it in the stream.
			return v[:len(v):len(v)], nil
		}
		return append(dst, v...), nil
	case *array.Float32:
		for _, v := range c.Float32Values() {
			dst = append(dst, float64(v))
		}
		return dst, nil
	}
	return dst, fieldErr(name, fmt.Sprintf("type %s: float64 or float32 degrees were expected", a.DataType()))
}

func appendIDs(dst []string, a arrow.Array) ([]string, error) {
	if a.NullN() > 0 {
		return dst, fieldErr("id", "null ids")
	}
	switch c := a.(type) {
	case *array.String:
		for i := range c.Len() {
			dst = append(dst, c.Value(i))
		}
	case *array.LargeString:
		for i := range c.Len() {
			dst = append(dst, c.Value(i))
		}
	case *array.Int64:
		for _, v := range c.Int64Values() {
			dst = append(dst, strconv.FormatInt(v, 10))
		}
	case *array.Int32:
		for _, v := range c.Int32Values() {
			dst = append(dst, strconv.FormatInt(int64(v), 10))
		}
	case *array.Uint32:
		for _, v := range c.Uint32Values() {
			dst = append(dst, strconv.FormatUint(uint64(v), 10))
		}
	case *array.Uint64:
		for _, v := range c.Uint64Values() {
			dst = append(dst, strconv.FormatUint(v, 10))
		}
	default:
		return dst, fieldErr("id", fmt.Sprintf("type %s: strings or integers were expected", a.DataType()))
	}
	return dst, nil
}

// arrowQuery reads a query whose body is an Arrow stream of points; its
// options come in the URL (?k=8&max_m=5000, ?radius_m=100&list=true).
func (s *Server) arrowQuery(r *http.Request, k endpoint) (*query, error) {
	cols, err := readArrow(r.Body, s.cfg.MaxPoints, s.cfg.MaxBodyBytes, false)
	if err != nil {
		return nil, err
	}
	q := &query{}
	if q.lat, q.lon, err = pointsOf(numbers{v: cols.lat}, numbers{v: cols.lon}, s.cfg.MaxPoints); err != nil {
		return nil, err
	}
	kk, maxM, radiusM, list, err := urlOptions(r)
	if err != nil {
		return nil, err
	}
	return q, s.finish(q, k, kk, maxM, radiusM, list)
}

// arrowUpdate reads an update whose body is an Arrow stream of id, lat,
// lon (?replace=true: the whole new set, the id column optional).
func (s *Server) arrowUpdate(r *http.Request) (Update, error) {
	cols, err := readArrow(r.Body, s.cfg.MaxPoints, s.cfg.MaxBodyBytes, true)
	if err != nil {
		return Update{}, err
	}
	var up Update
	if v := r.URL.Query().Get("replace"); v != "" {
		if up.Replace, err = strconv.ParseBool(v); err != nil {
			return Update{}, badRequest("replace", fmt.Sprintf("%q is not true or false", v))
		}
	}
	up.NoIDs = up.Replace && !cols.hasIDs
	ids := cols.ids
	if cols.hasIDs && ids == nil {
		ids = []string{}
	}
	return up, s.moves(&up, ids, cols.lat, cols.lon)
}

// writeAnswerArrow writes a's answer as an Arrow IPC stream of one record
// batch: nearest, one row a point (ref_index[, ref_id], distance_m); k
// nearest and within lists, one row a neighbour found (obs_index[, rank],
// ref_index[, ref_id], distance_m); within counts, one row a point
// (count). The schema's metadata holds reference_version.
func writeAnswerArrow(w http.ResponseWriter, q *query, a *answer) error {
	s := a.snap
	var fields []arrow.Field
	add := func(name string, t arrow.DataType) { fields = append(fields, arrow.Field{Name: name, Type: t}) }
	// rows are the flat answer's entries to write, with their point.
	var rows, obs []uint32
	var rank []int32
	switch q.kind() {
	case stream.KindNearest:
		rows = make([]uint32, len(a.index))
		for i := range rows {
			rows[i] = uint32(i)
		}
	case stream.KindKNearest:
		add("obs_index", arrow.PrimitiveTypes.Uint32)
		add("rank", arrow.PrimitiveTypes.Int32)
		for j, ix := range a.index {
			if ix != noNeighbour {
				rows, obs, rank = append(rows, uint32(j)), append(obs, uint32(j/q.ask.K)), append(rank, int32(j%q.ask.K))
			}
		}
	case stream.KindWithinLists:
		add("obs_index", arrow.PrimitiveTypes.Uint32)
		rows, obs = make([]uint32, len(a.index)), make([]uint32, len(a.index))
		for i := range a.counts {
			for j := a.offsets[i]; j < a.offsets[i+1]; j++ {
				rows[j], obs[j] = uint32(j), uint32(i)
			}
		}
	}
	if q.kind() == stream.KindWithinCounts {
		add("count", arrow.PrimitiveTypes.Uint32)
	} else {
		add("ref_index", arrow.PrimitiveTypes.Uint32)
		if s.ids != nil {
			add("ref_id", arrow.BinaryTypes.String)
		}
		add("distance_m", arrow.PrimitiveTypes.Float64)
	}
	md := arrow.NewMetadata([]string{"reference_version"}, []string{strconv.FormatUint(s.version, 10)})
	schema := arrow.NewSchema(fields, &md)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	f := 0
	next := func() array.Builder { f++; return b.Field(f - 1) }
	if obs != nil {
		next().(*array.Uint32Builder).AppendValues(obs, nil)
	}
	if rank != nil || q.kind() == stream.KindKNearest {
		next().(*array.Int32Builder).AppendValues(rank, nil)
	}
	if q.kind() == stream.KindWithinCounts {
		next().(*array.Uint32Builder).AppendValues(a.counts, nil)
	} else {
		ib := next().(*array.Uint32Builder)
		ib.Reserve(len(rows))
		for _, j := range rows {
			ib.UnsafeAppend(a.index[j])
		}
		if s.ids != nil {
			sb := next().(*array.StringBuilder)
			sb.Reserve(len(rows))
			for _, j := range rows {
				sb.Append(s.id(a.index[j]))
			}
		}
		db := next().(*array.Float64Builder)
		db.Reserve(len(rows))
		for _, j := range rows {
			db.UnsafeAppend(float64(a.dist[j]) * EarthRadius)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	w.Header().Set("Content-Type", arrowStreamType)
	iw := ipc.NewWriter(w, ipc.WithSchema(schema), ipc.WithAllocator(memory.DefaultAllocator))
	if err := iw.Write(rec); err != nil {
		return ignoreWriteErr(err)
	}
	return ignoreWriteErr(iw.Close())
}
