package numpyio

import (
	"bytes"
	"errors"
	"hash/crc32"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/geoknn/geoknn/stream"
)

// memFile is a file in memory, written at several offsets at once as a
// file may be; writes from failAt on fail.
type memFile struct {
	mu     sync.Mutex
	b      []byte
	failAt int64
}

var errDiskFull = errors.New("disk full")

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failAt > 0 && off+int64(len(p)) > f.failAt {
		return 0, errDiskFull
	}
	if end := int(off) + len(p); end > len(f.b) {
		f.b = append(f.b, make([]byte, end-len(f.b))...)
	}
	return copy(f.b[off:], p), nil
}

// atAnswers are n rows of k answers, observation i within range of its
// first i%(k+1) references.
type atAnswers struct {
	n, k   int
	ref    []uint32
	metres []float64
}

func newAtAnswers(n, k int) *atAnswers {
	a := &atAnswers{n: n, k: k, ref: make([]uint32, n*k), metres: make([]float64, n*k)}
	for e := range a.ref {
		a.ref[e], a.metres[e] = uint32(e*2654435761>>7), float64(e)*1.25+0.5
		if e%7 == 3 {
			a.ref[e], a.metres[e] = math.MaxUint32, math.Inf(1)
		}
	}
	return a
}

func (a *atAnswers) chunk(lo, hi int) stream.Answers {
	return stream.Answers{Base: lo, N: hi - lo,
		Nearest: func(i int) (uint32, float64) { return a.ref[(lo+i)*a.k], a.metres[(lo+i)*a.k] },
		KRow: func(i, r int) (uint32, float64, bool) {
			e := (lo+i)*a.k + r
			return a.ref[e], a.metres[e], a.ref[e] != math.MaxUint32
		},
		Within: stream.Within{Count: func(i int) int { return (lo + i) % (a.k + 1) },
			Ref: func(i, r int) (uint32, float64) { return a.ref[(lo+i)*a.k+r], a.metres[(lo+i)*a.k+r] }}}
}

// whole is the archive the whole-answer writers write of a.
func (a *atAnswers) whole(t *testing.T, kind stream.AnswerKind) []byte {
	var b bytes.Buffer
	var err error
	switch kind {
	case stream.KindNearest:
		err = WriteResultsNPZ(&b, a.n, a.chunk(0, a.n).Nearest)
	case stream.KindKNearest:
		err = WriteKResultsNPZ(&b, a.n, a.k, a.chunk(0, a.n).KRow)
	default:
		counts, offsets, index, metres := a.csr(kind)
		err = WriteWithinNPZ(&b, counts, offsets, index, func(e int) float64 { return metres[e] })
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// csr is a's radius lists as WriteWithinNPZ takes them (counts alone for
// KindWithinCounts).
func (a *atAnswers) csr(kind stream.AnswerKind) (counts []uint32, offsets []uint64, index []uint32, metres []float64) {
	if kind == stream.KindWithinLists {
		offsets = []uint64{0}
	}
	for i := range a.n {
		counts = append(counts, uint32(i%(a.k+1)))
		if kind == stream.KindWithinLists {
			index, metres = append(index, a.ref[i*a.k:i*a.k+i%(a.k+1)]...), append(metres, a.metres[i*a.k:i*a.k+i%(a.k+1)]...)
			offsets = append(offsets, uint64(len(index)))
		}
	}
	return counts, offsets, index, metres
}

// Chunks of odd sizes, each of several blocks written at once at their
// offsets, make the whole-answer writers' archive, and each array's
// combined CRC is its bytes'.
func TestNPZAtBlocksAsWhole(t *testing.T) {
	a := newAtAnswers(700_001, 3)
	sizes := []int{1, 262_147, 99_991, 3*npyChunk + 5}
	for kind := stream.KindNearest; kind <= stream.KindWithinLists; kind++ {
		f := &memFile{}
		w, err := NewNPZAnswerWriterAt(f, kind, a.k, a.n, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		for c, lo := 0, 0; lo < a.n; c, lo = c+1, lo+sizes[c%len(sizes)] {
			if err := w.Write(a.chunk(lo, min(a.n, lo+sizes[c%len(sizes)]))); err != nil {
				t.Fatalf("kind %d: %v", kind, err)
			}
		}
		checkAtCRCs(t, w, f)
		if err := w.Close(); err != nil {
			t.Fatalf("kind %d: %v", kind, err)
		}
		if want := a.whole(t, kind); !bytes.Equal(f.b, want) {
			t.Errorf("kind %d: %d bytes, not the whole-answer writer's %d", kind, len(f.b), len(want))
		}
	}
}

// checkAtCRCs checks that each array written in place has the CRC of the
// bytes at its place.
func checkAtCRCs(t *testing.T, w stream.AnswerWriter, f *memFile) {
	t.Helper()
	z := w.(*npzAnswers)
	for m, mb := range z.members {
		aw, ok := mb.w.(*atWriter)
		if !ok {
			continue
		}
		start := z.at.dataAt(m, mb)
		if got := crc32.ChecksumIEEE(f.b[start:aw.off]); got != aw.crc {
			t.Errorf("array %s: CRC %08x, its bytes' %08x", mb.name, aw.crc, got)
		}
	}
}

// A write that fails at an offset, and an encoder that panics, fail the
// chunk with their error, not the process.
func TestNPZAtBlocksErrors(t *testing.T) {
	a := newAtAnswers(700_001, 1)
	f := &memFile{failAt: 3 << 20}
	w, err := NewNPZAnswerWriterAt(f, stream.KindNearest, 1, a.n, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(a.chunk(0, a.n)); !errors.Is(err, errDiskFull) {
		t.Errorf("a failed write: %v, want %v", err, errDiskFull)
	}
	w.Abort()
	var b atBlocks
	aw := &atWriter{f: &memFile{}}
	err = b.write(aw, 5*npyChunk, npyChunk, 4, func(dst []byte, lo, hi int) ([]byte, error) {
		if lo == 3*npyChunk {
			panic("bug")
		}
		return append(dst, make([]byte, 4*(hi-lo))...), nil
	})
	if err == nil || !strings.Contains(err.Error(), "internal error encoding items 786432 to 1048576: bug") {
		t.Errorf("a panicking encoder: %v", err)
	}
	if aw.off != 0 {
		t.Errorf("offset %d after a failed write, want 0", aw.off)
	}
}
