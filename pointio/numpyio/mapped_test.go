package numpyio

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/geoknn/geoknn/stream"
)

// An archive written through a mapping of a real file is the whole-answer
// writers' archive, and the file is no longer than it.
func TestNPZAtMappedAsWhole(t *testing.T) {
	a := newAtAnswers(300_007, 2)
	for _, kind := range []stream.AnswerKind{stream.KindNearest, stream.KindKNearest, stream.KindWithinCounts} {
		path := filepath.Join(t.TempDir(), "a.npz")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w, err := NewNPZAnswerWriterAt(f, kind, a.k, a.n, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if m := w.(*npzAnswers).at.mapped; m == nil && mappingOS {
			t.Errorf("kind %d: not mapped", kind)
		}
		for lo := 0; lo < a.n; lo += 99_991 {
			if err := w.Write(a.chunk(lo, min(a.n, lo+99_991))); err != nil {
				t.Fatalf("kind %d: %v", kind, err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatalf("kind %d: %v", kind, err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if want := a.whole(t, kind); !bytes.Equal(got, want) {
			t.Errorf("kind %d: %d bytes, not the whole-answer writer's %d", kind, len(got), len(want))
		}
	}
}
