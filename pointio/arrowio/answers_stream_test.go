package arrowio

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/stream"
)

// answerSet is a query's answers held whole: k a row (MaxUint32 past
// those found), and radius lists of entries into ref and metres.
type answerSet struct {
	n, k   int
	ref    []uint32
	metres []float64
	lists  [][]int
}

func generatedAnswers(n, k int, seed uint64) *answerSet {
	r := rand.New(rand.NewPCG(seed, 1))
	s := &answerSet{n: n, k: k, ref: make([]uint32, n*k), metres: make([]float64, n*k), lists: make([][]int, n)}
	for i := range n {
		found := k
		if r.IntN(5) == 0 {
			found = r.IntN(k) + 1
		}
		for j := range k {
			e := i*k + j
			s.ref[e], s.metres[e] = r.Uint32N(1<<20), r.Float64()*2e7
			if j >= found {
				s.ref[e], s.metres[e] = math.MaxUint32, math.Inf(1)
			} else if r.IntN(2) == 0 {
				s.lists[i] = append(s.lists[i], e)
			}
		}
	}
	return s
}

// emptied is s with no answer found for observations [lo, hi): k-nearest
// rows cut by a distance limit, radius lists empty.
func (s *answerSet) emptied(lo, hi int) *answerSet {
	for i := lo; i < hi; i++ {
		for j := range s.k {
			s.ref[i*s.k+j], s.metres[i*s.k+j] = math.MaxUint32, math.Inf(1)
		}
		s.lists[i] = nil
	}
	return s
}

func (s *answerSet) chunk(lo, hi int) stream.Answers {
	return stream.Answers{Base: lo, N: hi - lo,
		Nearest: func(i int) (uint32, float64) { return s.ref[(lo+i)*s.k], s.metres[(lo+i)*s.k] },
		KRow: func(i, r int) (uint32, float64, bool) {
			e := (lo+i)*s.k + r
			return s.ref[e], s.metres[e], s.ref[e] != math.MaxUint32
		},
		Within: stream.Within{Count: func(i int) int { return len(s.lists[lo+i]) }, Ref: func(i, r int) (uint32, float64) {
			e := s.lists[lo+i][r]
			return s.ref[e], s.metres[e]
		}}}
}

// whole is what today's writers write for s.
func (s *answerSet) whole(format string, kind stream.AnswerKind) ([]byte, error) {
	var b bytes.Buffer
	a := s.chunk(0, s.n)
	var err error
	switch kind {
	case stream.KindNearest:
		err = refResults(&b, format, s.n, a.Nearest)
	case stream.KindKNearest:
		err = refKResults(&b, format, s.n, s.k, a.KRow)
	case stream.KindWithinCounts:
		err = refWithin(&b, format, s.n, stream.Within{Count: a.Within.Count})
	default:
		err = refWithin(&b, format, s.n, a.Within)
	}
	return b.Bytes(), err
}

// streamed writes s through NewAnswerWriter, chunk rows at a time.
func (s *answerSet) streamed(format string, kind stream.AnswerKind, chunk, workers int) ([]byte, error) {
	return s.streamedWith(format, kind, chunk, StreamOptions{Workers: workers})
}

// streamedWith is streamed with opts.
func (s *answerSet) streamedWith(format string, kind stream.AnswerKind, chunk int, opts StreamOptions) ([]byte, error) {
	var b bytes.Buffer
	w, err := NewAnswerWriter(&b, format, kind, s.k, opts)
	if err != nil {
		return nil, err
	}
	for lo := 0; lo < s.n; lo += chunk {
		if err := w.Write(s.chunk(lo, min(s.n, lo+chunk))); err != nil {
			w.Abort()
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// The streamed Parquet and Arrow answers are today's, byte for byte, for
// every kind, in row groups of 1000 observations (set small so that a
// test has many) and of 2^20 (today's), whatever the chunks.
func TestStreamedAnswersAsWhole(t *testing.T) {
	defer func(n int) { parquetGroupItems = n }(parquetGroupItems)
	// The fourth set's second and last row groups of 1000 hold no k-nearest
	// row and no radius entry: groups of no rows, whose offsets the
	// library leaves at 0 wherever they lie.
	sets := []*answerSet{generatedAnswers(5_500, 3, 1), generatedAnswers(1, 1, 2), {k: 2},
		generatedAnswers(3_500, 2, 3).emptied(1000, 2000).emptied(3000, 3500)}
	for _, group := range []int{1000, 1 << 20} {
		parquetGroupItems = group
		for si, s := range sets {
			for _, format := range []string{pointio.FormatParquet, pointio.FormatArrow} {
				for kind := stream.KindNearest; kind <= stream.KindWithinLists; kind++ {
					want, wantErr := s.whole(format, kind)
					for _, chunk := range []int{333, 1000, 4096, max(s.n, 1)} {
						got, err := s.streamed(format, kind, chunk, 3)
						if fmt.Sprint(err) != fmt.Sprint(wantErr) || !bytes.Equal(got, want) {
							t.Errorf("set %d, groups of %d, %s, kind %d, chunks of %d: %d bytes (%v), want %d (%v)",
								si, group, format, kind, chunk, len(got), err, len(want), wantErr)
						}
					}
				}
			}
		}
	}
}

// Rows with identifiers streamed are WriteRows's, byte for byte.
func TestRowsWriterAsWhole(t *testing.T) {
	defer func(n int) { parquetGroupItems = n }(parquetGroupItems)
	parquetGroupItems = 1000
	fields := []arrow.Field{obsIndexField, {Name: "obs_id", Type: arrow.BinaryTypes.String}, {Name: "rank", Type: arrow.PrimitiveTypes.Int32}, metresField}
	rows := func(base int) func(j int, add func(...any)) {
		return func(j int, add func(...any)) {
			i := base + j
			for r := range i % 3 {
				add(int64(i), fmt.Sprintf("id %d", i), int32(r), float64(i)/7)
			}
		}
	}
	for _, format := range []string{pointio.FormatParquet, pointio.FormatArrow} {
		var want bytes.Buffer
		if err := WriteRows(&want, format, fields, 5_500, rows(0)); err != nil {
			t.Fatal(err)
		}
		for _, chunk := range []int{1, 777, 5_500} {
			var got bytes.Buffer
			w, err := NewRowsWriter(&got, format, fields, StreamOptions{Workers: 3})
			if err != nil {
				t.Fatal(err)
			}
			for lo := 0; lo < 5_500; lo += chunk {
				if err := w.Write(min(chunk, 5_500-lo), rows(lo)); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil || !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("%s, chunks of %d: %d bytes (%v), want %d", format, chunk, got.Len(), err, want.Len())
			}
		}
	}
}

// Streamed radius lists go to Parquet in row groups of a bounded number
// of entries (one observation's list at least), not of 2^20 observations
// whatever their lists hold, and read back as the whole answers (#41 C4).
func TestStreamedListsGroupsBounded(t *testing.T) {
	defer func(n int) { parquetGroupEntries = n }(parquetGroupEntries)
	parquetGroupEntries = 500
	s := generatedAnswers(5_500, 3, 1)
	got, err := s.streamed(pointio.FormatParquet, stream.KindWithinLists, 777, 3)
	if err != nil {
		t.Fatal(err)
	}
	want, err := s.whole(pointio.FormatParquet, stream.KindWithinLists)
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := file.NewParquetReader(bytes.NewReader(got))
	if err != nil {
		t.Fatal(err)
	}
	for g := range rdr.NumRowGroups() {
		if n := rdr.MetaData().RowGroup(g).NumRows(); n > 500 {
			t.Fatalf("row group %d holds %d entries, more than 500", g, n)
		}
	}
	a, b := readBack(t, got), readBack(t, want)
	if rdr.NumRowGroups() < 10 || a.NumRows() != b.NumRows() {
		t.Fatalf("%d row groups, %d rows; want many groups, %d rows", rdr.NumRowGroups(), a.NumRows(), b.NumRows())
	}
	for c := range int(a.NumCols()) {
		for i := range int(a.NumRows()) {
			if x, y := cell[float64](a, c, i), cell[float64](b, c, i); x != y && !(math.IsNaN(x) && math.IsNaN(y)) {
				t.Fatalf("column %d row %d differs", c, i)
			}
		}
	}
}

// A panic in a row callback of a group built by an encoding goroutine
// is the writer's error, not the process's end.
func TestRowsWriterPanicIsError(t *testing.T) {
	defer func(n int) { parquetGroupItems = n }(parquetGroupItems)
	parquetGroupItems = 100
	fields := []arrow.Field{obsIndexField}
	w, err := NewRowsWriter(io.Discard, pointio.FormatParquet, fields, StreamOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	err = w.Write(500, func(j int, add func(...any)) {
		if j == 250 {
			panic("a bug in a row")
		}
		add(int64(j))
	})
	if err == nil {
		err = w.Close()
	} else {
		w.Abort()
	}
	if err == nil || !strings.Contains(err.Error(), "internal error: a bug in a row") {
		t.Fatalf("got %v, want the panic as an error", err)
	}
}

// The batches in flight shrink to the memory budget once a group's size
// is known.
func TestRowsWriterWindowFromGroups(t *testing.T) {
	defer func(n int) { parquetGroupItems = n }(parquetGroupItems)
	parquetGroupItems = 1000
	fields := []arrow.Field{obsIndexField, {Name: "obs_id", Type: arrow.BinaryTypes.String}}
	w, err := NewRowsWriter(io.Discard, pointio.FormatParquet, fields, StreamOptions{Workers: 8, MemoryBytes: 200 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if w.workers != 3 { // 200 KiB over the starting estimate of 64 B an item
		t.Fatalf("%d batches in flight to start with, want 3", w.workers)
	}
	err = w.Write(5000, func(j int, add func(...any)) {
		for r := range 8 { // 8 rows an item, each about 60 bytes
			add(int64(j*8+r), strings.Repeat("x", 40))
		}
	})
	if err == nil {
		err = w.Close()
	}
	if err != nil || w.workers != 1 {
		t.Fatalf("%v; %d batches in flight for groups of about 1 MB in a 200 KiB budget, want 1", err, w.workers)
	}
}
