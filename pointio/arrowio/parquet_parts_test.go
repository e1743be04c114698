package arrowio

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/stream"
)

// fileAt is a file in memory.
type fileAt struct{ b []byte }

func (f *fileAt) WriteAt(p []byte, off int64) (int, error) {
	if end := int(off) + len(p); end > len(f.b) {
		f.b = append(f.b, make([]byte, end-len(f.b))...)
	}
	return copy(f.b[off:], p), nil
}

// Parts of a Parquet file written apart and put at their offsets, with
// FinishParquet's magic and footer, are NewAnswerWriter's file, byte for
// byte, for every kind, however the groups fall to the parts (some
// parts with none).
func TestParquetPartsAsWhole(t *testing.T) {
	defer func(n int) { parquetGroupItems = n }(parquetGroupItems)
	parquetGroupItems = 1000
	sets := []*answerSet{generatedAnswers(5_500, 3, 1), generatedAnswers(1, 1, 2), {k: 2},
		generatedAnswers(3_500, 2, 3).emptied(1000, 2000).emptied(3000, 3500)} // groups of no rows
	for si, s := range sets {
		for kind := stream.KindNearest; kind <= stream.KindWithinLists; kind++ {
			want, err := s.whole(pointio.FormatParquet, kind)
			if err != nil {
				t.Fatal(err)
			}
			for _, cuts := range [][]int{{0, 1000, 3000, s.n}, {0, 0, 5000, s.n}, {0, s.n, s.n, s.n}} {
				if cuts[2] > s.n {
					continue
				}
				got := s.parquetParts(t, kind, cuts)
				if !bytes.Equal(got, want) {
					t.Errorf("set %d, kind %d, cuts %v: %d bytes, want %d", si, kind, cuts, len(got), len(want))
				}
			}
		}
	}
}

// parquetParts writes s's parts apart, then puts them together.
func (s *answerSet) parquetParts(t *testing.T, kind stream.AnswerKind, cuts []int) []byte {
	f := &fileAt{}
	at := int64(4)
	var metas [][]byte
	for p := range len(cuts) - 1 {
		var b bytes.Buffer
		w, err := NewParquetPartWriter(&b, kind, s.k, cuts[p], StreamOptions{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(s.chunk(cuts[p], cuts[p+1])); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		meta, err := w.Meta(at)
		if err != nil || w.Len() != int64(b.Len()) {
			t.Fatalf("Meta: %v; Len %d of %d bytes", err, w.Len(), b.Len())
		}
		f.WriteAt(b.Bytes(), at)
		at += w.Len()
		metas = append(metas, meta)
	}
	if err := FinishParquet(f, at, kind, s.k, metas); err != nil {
		t.Fatal(err)
	}
	return f.b
}

// Parts of a Parquet file of rows with identifiers, written apart and put
// together, are WriteRows's file, byte for byte.
func TestParquetRowsPartsAsWhole(t *testing.T) {
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
	var want bytes.Buffer
	if err := WriteRows(&want, pointio.FormatParquet, fields, 5_500, rows(0)); err != nil {
		t.Fatal(err)
	}
	for _, cuts := range [][]int{{0, 1000, 3000, 5500}, {0, 5500, 5500}} {
		f, at := &fileAt{}, int64(4)
		var metas [][]byte
		for p := range len(cuts) - 1 {
			var b bytes.Buffer
			w, err := NewParquetRowsPartWriter(&b, fields, StreamOptions{Workers: 2})
			if err == nil {
				err = w.Write(cuts[p+1]-cuts[p], rows(cuts[p]))
			}
			if err == nil {
				err = w.Close()
			}
			meta, merr := w.Meta(at)
			if err != nil || merr != nil {
				t.Fatal(err, merr)
			}
			f.WriteAt(b.Bytes(), at)
			at += w.Len()
			metas = append(metas, meta)
		}
		if err := FinishParquetRows(f, at, fields, metas); err != nil || !bytes.Equal(f.b, want.Bytes()) {
			t.Errorf("cuts %v: %d bytes (%v), want %d", cuts, len(f.b), err, want.Len())
		}
	}
}
