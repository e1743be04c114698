package formats

import (
	"bufio"
	"bytes"
	"testing"

	"github.com/geoknn/geoknn/pointio/csvio"
	"github.com/geoknn/geoknn/stream"
)

// NearestSize is the length of what the writer writes, for the
// generated sets' odd distances (0, ties at half a millimetre, beyond
// 1e12 m), from any first observation, and its error is the writer's.
func TestNearestCSVSize(t *testing.T) {
	for name, s := range answerSets(t) {
		for _, base := range []int{0, 9_999_990} {
			a := s.chunk(0, s.n)
			var b bytes.Buffer
			w, _ := csvio.NewAnswerPartWriter(bufio.NewWriter(&b), stream.KindNearest, 1, base, base == 0)
			a.Base = base
			werr := w.Write(a)
			if werr == nil {
				werr = w.Close()
			}
			size, err := csvio.NearestSize(base, s.n, a.Nearest, base == 0)
			if (err != nil) != (werr != nil) || (err == nil && size != int64(b.Len())) {
				t.Errorf("%s, from %d: size %d (%v), the writer wrote %d (%v)", name, base, size, err, b.Len(), werr)
			}
		}
	}
}

// AnswersSize is the length of what the writer writes, for every kind.
func TestAnswersCSVSize(t *testing.T) {
	for name, s := range answerSets(t) {
		for _, kind := range allKinds {
			for _, base := range []int{0, 123_456_789} {
				a := s.chunk(0, s.n)
				a.Base = base
				var b bytes.Buffer
				w, _ := csvio.NewAnswerPartWriter(bufio.NewWriter(&b), kind, s.k, base, base == 0)
				werr := w.Write(a)
				if werr == nil {
					werr = w.Close()
				}
				size, err := csvio.AnswersSize(kind, s.k, a, base == 0)
				if (err != nil) != (werr != nil) || (err == nil && size != int64(b.Len())) {
					t.Errorf("%s, kind %d, from %d: size %d (%v), the writer wrote %d (%v)", name, kind, base, size, err, b.Len(), werr)
				}
			}
		}
	}
}
