package arrowio

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/stream"
)

// patterned is n observations' answers, k each, entry e's reference and
// distance ref(e) and metres(e) (a reference of MaxUint32 is no answer,
// for k nearest), every other entry in its observation's radius list.
func patterned(n, k int, ref func(e int) uint32, metres func(e int) float64) *answerSet {
	s := &answerSet{n: n, k: k, ref: make([]uint32, n*k), metres: make([]float64, n*k), lists: make([][]int, n)}
	for e := range n * k {
		s.ref[e], s.metres[e] = ref(e), metres(e)
		if e%2 == 0 && s.ref[e] != math.MaxUint32 {
			s.lists[e/k] = append(s.lists[e/k], e)
		}
	}
	return s
}

// pageTestSets are answers whose pages test the page writer's edges:
// references spanning the 32 bits (deltas that wrap, miniblocks of 32 bits),
// constant references (miniblocks of 0 bits), zero distances of both
// signs (statistics' -0 and +0), infinities, NaN (no statistics where a
// page holds nothing else), missing k-nearest answers, and the answers
// of a query.
func pageTestSets(n int) map[string]*answerSet {
	spread := func(e int) uint32 { return uint32(e*2654435761) % math.MaxUint32 }
	return map[string]*answerSet{
		"query":    generatedAnswers(n, 3, 7),
		"spread":   patterned(n, 2, spread, func(e int) float64 { return float64(e%1000) * 123.25 }),
		"extremes": patterned(n, 1, func(e int) uint32 { return [2]uint32{0, math.MaxUint32 - 1}[e%2] }, func(e int) float64 { return math.Copysign(0, float64(e%2)-0.5) }),
		"constant": patterned(n, 4, func(int) uint32 { return 7 }, func(e int) float64 { return [3]float64{0, math.Inf(1), 1e300}[e%3] }),
		"nan": patterned(n, 1, func(e int) uint32 { return uint32(e) }, func(e int) float64 {
			if e < 1500 || e%7 == 0 {
				return math.NaN()
			}
			return -float64(e)
		}),
		"ascending": patterned(n, 8, func(e int) uint32 {
			if e%8 > 5 && e%3 == 0 {
				return math.MaxUint32 // the k nearest short of k
			}
			return uint32(e)
		}, func(e int) float64 { return float64(e) }),
	}
}

// The page writer's files are arrow-go's column writers' byte for byte,
// for every answer kind: with pages of 4 KiB, so that every column has
// many, each cut where arrow-go cuts it, in row groups of 3000
// observations, for one observation to three groups and a short one.
func TestParquetPagesAsArrowGo(t *testing.T) {
	defer func(n, p int) { parquetGroupItems, parquetPageBytes = n, p }(parquetGroupItems, parquetPageBytes)
	parquetGroupItems, parquetPageBytes = 3000, 4096
	for _, n := range []int{1, 2, 129, 1025, 2049, 7001} {
		for name, s := range pageTestSets(n) {
			for kind := stream.KindNearest; kind <= stream.KindWithinLists; kind++ {
				comparePages(t, s, kind, name)
			}
		}
	}
}

// As TestParquetPagesAsArrowGo with today's row groups and pages: 2^19
// observations' answers a group, 1 MiB pages.
func TestParquetPagesAsArrowGoFullSize(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 2^20 answers five ways")
	}
	s := generatedAnswers(1<<19+1000, 2, 11)
	for kind := stream.KindNearest; kind <= stream.KindWithinLists; kind++ {
		comparePages(t, s, kind, "query")
	}
}

// comparePages fails t unless the page writer writes s's answers of kind
// as arrow-go's column writers do, and they read back as s.
func comparePages(t *testing.T, s *answerSet, kind stream.AnswerKind, name string) {
	t.Helper()
	want, err := s.streamedWith(pointio.FormatParquet, kind, 1000, StreamOptions{Workers: 2, arrowPages: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.streamedWith(pointio.FormatParquet, kind, 1000, StreamOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s, %d answers of kind %d: %d bytes, arrow-go's %d; first difference at %d",
			name, s.n, kind, len(got), len(want), firstDifference(got, want))
		return
	}
	checkReadBack(t, s, kind, got)
}

func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// checkReadBack fails t unless the Parquet file b, read by arrow-go's
// readers, holds s's answers of kind.
func checkReadBack(t *testing.T, s *answerSet, kind stream.AnswerKind, b []byte) {
	t.Helper()
	want := s.rows(kind)
	tbl := readBack(t, b)
	if int(tbl.NumRows()) != len(want) {
		t.Fatalf("%d rows read back, want %d", tbl.NumRows(), len(want))
	}
	for i, row := range want {
		for c, v := range row {
			var got float64
			switch tbl.Schema().Field(c).Type.ID() {
			case arrow.FLOAT64:
				got = cell[float64](tbl, c, i)
			default:
				got = float64(cell[int64](tbl, c, i))
			}
			if math.Float64bits(got) != math.Float64bits(v) && !(math.IsNaN(got) && math.IsNaN(v)) {
				t.Fatalf("row %d column %d: %v, want %v", i, c, got, v)
			}
		}
	}
}

// rows is the rows of s's answers of kind, as numbers.
func (s *answerSet) rows(kind stream.AnswerKind) [][]float64 {
	var rows [][]float64
	for i := range s.n {
		switch kind {
		case stream.KindNearest:
			rows = append(rows, []float64{float64(i), float64(s.ref[i*s.k]), s.metres[i*s.k]})
		case stream.KindKNearest:
			for r := range s.k {
				e := i*s.k + r
				if s.ref[e] == math.MaxUint32 {
					break
				}
				rows = append(rows, []float64{float64(i), float64(r + 1), float64(s.ref[e]), s.metres[e]})
			}
		case stream.KindWithinCounts:
			rows = append(rows, []float64{float64(i), float64(len(s.lists[i]))})
		default:
			for _, e := range s.lists[i] {
				rows = append(rows, []float64{float64(i), float64(s.ref[e]), s.metres[e]})
			}
		}
	}
	return rows
}

// The page writer's pages read back through arrow-go's page reader with
// the encoding and values the column chunks' metadata says, the
// references and distances in several pages (obs_index's deltas of 1
// take 5 bytes a block of 128).
func TestParquetPagesHeaders(t *testing.T) {
	defer func(p int) { parquetPageBytes = p }(parquetPageBytes)
	parquetPageBytes = 4096
	s := generatedAnswers(7001, 1, 3)
	b, err := s.streamedWith(pointio.FormatParquet, stream.KindNearest, 1000, StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	for c := range 3 {
		col, err := rdr.MetaData().RowGroup(0).ColumnChunk(c)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := rdr.RowGroup(0).GetColumnPageReader(c)
		if err != nil {
			t.Fatal(err)
		}
		values, pages := 0, 0
		for pr.Next() {
			p := pr.Page()
			if parquet.Encoding(p.Encoding()) != col.Encodings()[0] {
				t.Errorf("column %d page %d: encoding %v, the chunk's %v", c, pages, p.Encoding(), col.Encodings())
			}
			values += int(p.NumValues())
			pages++
		}
		if err := pr.Err(); err != nil || int64(values) != col.NumValues() || (c > 0 && pages < 2) {
			t.Errorf("column %d: %d values in %d pages (%v), the chunk's %d", c, values, pages, err, col.NumValues())
		}
	}
}

// The longest page header fits the room made for it.
func TestPageHeaderRoom(t *testing.T) {
	st := newPageStats(math.MaxUint64, math.MaxUint64, 8)
	h := appendPageHeader(nil, pageHeader{uncompressed: math.MaxInt32, compressed: math.MaxInt32, values: math.MaxInt32,
		encoding: 5, stats: st, signed: true})
	if len(h) >= pageHeaderRoom {
		t.Fatalf("a header of %d bytes, room for %d", len(h), pageHeaderRoom)
	}
}

// Any answers, any page size: the page writer's file is arrow-go's and
// reads back as the answers. The input's bytes are the references (4
// bytes each) and the distances' bits (8 bytes each, NaN and
// infinities included), taken round.
func FuzzParquetPages(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, uint16(3000), uint8(1), uint8(1), uint16(4))
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0x80, 0, 0, 0, 0}, uint16(2500), uint8(3), uint8(2), uint16(1))
	f.Add(make([]byte, 64), uint16(1), uint8(8), uint8(4), uint16(100))
	f.Fuzz(func(t *testing.T, data []byte, n uint16, k, kind uint8, pageBytes uint16) {
		if len(data) < 12 {
			return
		}
		defer func(g, p int) { parquetGroupItems, parquetPageBytes = g, p }(parquetGroupItems, parquetPageBytes)
		parquetGroupItems, parquetPageBytes = 1500, int(pageBytes)+1
		kinds := stream.KindWithinLists - stream.KindNearest + 1
		ak := stream.KindNearest + stream.AnswerKind(kind)%kinds
		s := patterned(int(n%5000)+1, int(k%8)+1, func(e int) uint32 {
			return binary.LittleEndian.Uint32(roundBytes(data, e*4, 4))
		}, func(e int) float64 {
			return math.Float64frombits(binary.LittleEndian.Uint64(roundBytes(data, e*8+3, 8)))
		})
		comparePages(t, s, ak, "fuzzed")
	})
}

// roundBytes is size bytes of data from at on, taken round.
func roundBytes(data []byte, at, size int) []byte {
	out := make([]byte, size)
	for i := range out {
		out[i] = data[(at+i)%len(data)]
	}
	return out
}
