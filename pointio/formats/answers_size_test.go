package pointio

import (
	"bufio"
	"bytes"
	"math"
	"strconv"
	"testing"

	"github.com/geoknn/geoknn/stream"
)

// NearestCSVSize is the length of what the writer writes, for the
// generated sets' odd distances (0, ties at half a millimetre, beyond
// 1e12 m), from any first observation, and its error is the writer's.
func TestNearestCSVSize(t *testing.T) {
	for name, s := range answerSets(t) {
		for _, base := range []int{0, 9_999_990} {
			a := s.chunk(0, s.n)
			var b bytes.Buffer
			w, _ := NewCSVAnswerPartWriter(bufio.NewWriter(&b), stream.KindNearest, 1, base, base == 0)
			a.Base = base
			werr := w.Write(a)
			if werr == nil {
				werr = w.Close()
			}
			size, err := NearestCSVSize(base, s.n, a.Nearest, base == 0)
			if (err != nil) != (werr != nil) || (err == nil && size != int64(b.Len())) {
				t.Errorf("%s, from %d: size %d (%v), the writer wrote %d (%v)", name, base, size, err, b.Len(), werr)
			}
		}
	}
	for _, v := range []uint64{0, 9, 10, 99, 100, 999999, 1000000, math.MaxUint32, 1e19 - 1, 1e19, math.MaxUint64} {
		if got, want := decimalDigits(v), len(strconv.FormatUint(v, 10)); got != want {
			t.Errorf("decimalDigits(%d) = %d, want %d", v, got, want)
		}
	}
}

// AnswersCSVSize is the length of what the writer writes, for every kind.
func TestAnswersCSVSize(t *testing.T) {
	for name, s := range answerSets(t) {
		for _, kind := range allKinds {
			for _, base := range []int{0, 123_456_789} {
				a := s.chunk(0, s.n)
				a.Base = base
				var b bytes.Buffer
				w, _ := NewCSVAnswerPartWriter(bufio.NewWriter(&b), kind, s.k, base, base == 0)
				werr := w.Write(a)
				if werr == nil {
					werr = w.Close()
				}
				size, err := AnswersCSVSize(kind, s.k, a, base == 0)
				if (err != nil) != (werr != nil) || (err == nil && size != int64(b.Len())) {
					t.Errorf("%s, kind %d, from %d: size %d (%v), the writer wrote %d (%v)", name, kind, base, size, err, b.Len(), werr)
				}
			}
		}
	}
}
