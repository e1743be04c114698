package formats

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/csvio"
	"github.com/geoknn/geoknn/pointio/numpyio"
	"github.com/geoknn/geoknn/stream"
)

// answerSet is a query's answers held whole: k a row (-1 refs past those
// found), and radius lists.
type answerSet struct {
	n, k   int
	ref    []uint32 // n*k, math.MaxUint32: none
	metres []float64
	lists  [][]int // radius: each observation's entries into ref/metres
}

func (s *answerSet) kRow(base int) stream.KRow {
	return func(i, r int) (uint32, float64, bool) {
		e := (base+i)*s.k + r
		return s.ref[e], s.metres[e], s.ref[e] != math.MaxUint32
	}
}

func (s *answerSet) within(base int) stream.Within {
	return stream.Within{Count: func(i int) int { return len(s.lists[base+i]) }, Ref: func(i, r int) (uint32, float64) {
		e := s.lists[base+i][r]
		return s.ref[e], s.metres[e]
	}}
}

// chunk is observations [lo, hi) as a stream writer takes them.
func (s *answerSet) chunk(lo, hi int) stream.Answers {
	return stream.Answers{Base: lo, N: hi - lo, KRow: s.kRow(lo), Within: s.within(lo),
		Nearest: func(i int) (uint32, float64) { return s.ref[(lo+i)*s.k], s.metres[(lo+i)*s.k] }}
}

// generatedAnswers draws n x k answers, some rows short, some distances
// odd (0, ties at half a millimetre, beyond 1e12 m), and radius lists.
func generatedAnswers(n, k int, seed uint64) *answerSet {
	r := rand.New(rand.NewPCG(seed, 1))
	s := &answerSet{n: n, k: k, ref: make([]uint32, n*k), metres: make([]float64, n*k), lists: make([][]int, n)}
	for i := range n {
		found := k
		if r.IntN(5) == 0 {
			found = r.IntN(k + 1)
		}
		for j := range k {
			e := i*k + j
			s.ref[e], s.metres[e] = r.Uint32N(1<<20), r.Float64()*2e7
			switch r.IntN(50) {
			case 0:
				s.metres[e] = 0
			case 1:
				s.metres[e] = 12.0005
			case 2:
				s.metres[e] = 3e12
			}
			if j >= found {
				s.ref[e], s.metres[e] = math.MaxUint32, math.Inf(1)
			} else if r.IntN(2) == 0 {
				s.lists[i] = append(s.lists[i], e)
			}
		}
	}
	return s
}

// realAnswers answers the cities of testdata/realdata against its
// airports by brute force: k nearest, and those within 200 km as lists.
func realAnswers(t *testing.T, k int) *answerSet {
	obs, err := ReadFile(filepath.Join("..", "..", "testdata", "realdata", "cities.csv"))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := ReadFile(filepath.Join("..", "..", "testdata", "realdata", "airports.csv"))
	if err != nil {
		t.Fatal(err)
	}
	s := &answerSet{n: len(obs), k: k, ref: make([]uint32, len(obs)*k), metres: make([]float64, len(obs)*k), lists: make([][]int, len(obs))}
	for i, o := range obs {
		d := make([]float64, len(ref))
		order := make([]int, len(ref))
		for j, p := range ref {
			d[j], order[j] = haversineMetres(o.Lat(), o.Lon(), p.Lat(), p.Lon()), j
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmpFloat(d[a], d[b]) })
		for r := range k {
			s.ref[i*k+r], s.metres[i*k+r] = uint32(order[r]), d[order[r]]
			if d[order[r]] < 2e5 {
				s.lists[i] = append(s.lists[i], i*k+r)
			}
		}
	}
	return s
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func haversineMetres(lat1, lon1, lat2, lon2 float64) float64 {
	p1, p2 := lat1*math.Pi/180, lat2*math.Pi/180
	dp, dl := p2-p1, (lon2-lon1)*math.Pi/180
	h := math.Sin(dp/2)*math.Sin(dp/2) + math.Cos(p1)*math.Cos(p2)*math.Sin(dl/2)*math.Sin(dl/2)
	return 2 * 6371008.8 * math.Asin(math.Min(1, math.Sqrt(h)))
}

// wholeCSV is what today's writers write for s, of kind.
func wholeCSV(t *testing.T, s *answerSet, kind stream.AnswerKind) ([]byte, error) {
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	var err error
	switch kind {
	case stream.KindNearest:
		err = csvio.WriteResults(w, s.n, s.chunk(0, s.n).Nearest)
	case stream.KindKNearest:
		err = csvio.WriteKResults(w, s.n, s.k, s.kRow(0))
	case stream.KindWithinCounts:
		err = csvio.WriteWithinCounts(w, s.n, s.within(0))
	case stream.KindWithinLists:
		err = csvio.WriteWithinLists(w, s.n, s.within(0))
	}
	return b.Bytes(), err
}

// wholeNPZ is what today's writers write for s, of kind, as .npz.
func wholeNPZ(t *testing.T, s *answerSet, kind stream.AnswerKind) ([]byte, error) {
	var b bytes.Buffer
	var err error
	switch kind {
	case stream.KindNearest:
		err = numpyio.WriteResultsNPZ(&b, s.n, s.chunk(0, s.n).Nearest)
	case stream.KindKNearest:
		err = numpyio.WriteKResultsNPZ(&b, s.n, s.k, s.kRow(0))
	default:
		counts, offsets, index, metres := s.csr(kind)
		err = numpyio.WriteWithinNPZ(&b, counts, offsets, index, metres)
	}
	return b.Bytes(), err
}

// csr is s's radius lists as WriteWithinNPZ takes them (counts alone
// for KindWithinCounts, as knn run passes them).
func (s *answerSet) csr(kind stream.AnswerKind) ([]uint32, []uint64, []uint32, func(int) float64) {
	counts := make([]uint32, s.n)
	var offsets []uint64
	var index []uint32
	var metres []float64
	if kind == stream.KindWithinLists {
		offsets = []uint64{0}
	}
	for i, l := range s.lists {
		counts[i] = uint32(len(l))
		if kind == stream.KindWithinLists {
			for _, e := range l {
				index, metres = append(index, s.ref[e]), append(metres, s.metres[e])
			}
			offsets = append(offsets, uint64(len(index)))
		}
	}
	return counts, offsets, index, func(e int) float64 { return metres[e] }
}

// streamed writes s through a stream writer made by open, chunk rows at
// a time.
func streamed(t *testing.T, s *answerSet, chunk int, open func(w *bufio.Writer) (stream.AnswerWriter, error)) ([]byte, error) {
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	aw, err := open(w)
	if err != nil {
		t.Fatal(err)
	}
	for lo := 0; lo < s.n; lo += chunk {
		if err := aw.Write(s.chunk(lo, min(s.n, lo+chunk))); err != nil {
			aw.Abort()
			return nil, err
		}
	}
	if err := aw.Close(); err != nil {
		return nil, err
	}
	w.Flush()
	return b.Bytes(), nil
}

// sameOutput reports whether two writes gave the same bytes, or the same
// error.
func sameOutput(got []byte, gotErr error, want []byte, wantErr error) bool {
	if gotErr != nil || wantErr != nil {
		return fmt.Sprint(gotErr) == fmt.Sprint(wantErr)
	}
	return bytes.Equal(got, want)
}

var allKinds = []stream.AnswerKind{stream.KindNearest, stream.KindKNearest, stream.KindWithinCounts, stream.KindWithinLists}

func answerSets(t *testing.T) map[string]*answerSet {
	return map[string]*answerSet{
		"generated k=3":   generatedAnswers(70_000, 3, 1),
		"generated k=1":   generatedAnswers(5_000, 1, 2),
		"realdata k=4":    realAnswers(t, 4),
		"empty":           {k: 2},
		"one observation": generatedAnswers(1, 2, 3),
	}
}

// The streamed outputs are today's, byte for byte, whatever the chunks.
func TestStreamedAnswersAsWhole(t *testing.T) {
	for name, s := range answerSets(t) {
		for _, kind := range allKinds {
			wantCSV, csvErr := wholeCSV(t, s, kind)
			wantNPZ, npzErr := wholeNPZ(t, s, kind)
			for _, chunk := range []int{1, 777, 1 << 16, max(s.n, 1)} {
				if chunk == 1 && s.n > 10_000 {
					continue
				}
				got, err := streamed(t, s, chunk, func(w *bufio.Writer) (stream.AnswerWriter, error) { return csvio.NewAnswerWriter(w, kind, s.k) })
				if !sameOutput(got, err, wantCSV, csvErr) {
					t.Errorf("%s, kind %d, chunks of %d: CSV differs (%d bytes, %v; want %d, %v)", name, kind, chunk, len(got), err, len(wantCSV), csvErr)
				}
				for _, n := range []int{s.n, -1} {
					got, err := streamed(t, s, chunk, func(w *bufio.Writer) (stream.AnswerWriter, error) {
						return numpyio.NewNPZAnswerWriter(w, kind, s.k, n, t.TempDir())
					})
					if !sameOutput(got, err, wantNPZ, npzErr) {
						t.Errorf("%s, kind %d, chunks of %d, n %d: npz differs (%d bytes, %v; want %d, %v)", name, kind, chunk, n, len(got), err, len(wantNPZ), npzErr)
					}
				}
			}
		}
	}
}

// A chunk out of order is refused.
func TestStreamedAnswersInOrder(t *testing.T) {
	s := generatedAnswers(10, 1, 4)
	w, _ := csvio.NewAnswerWriter(bufio.NewWriter(&bytes.Buffer{}), stream.KindNearest, 1)
	if err := w.Write(s.chunk(5, 10)); err == nil {
		t.Fatal("a chunk from 5 first: no error")
	}
}

// Rows with identifiers streamed are WriteRows's, byte for byte.
func TestCSVRowsAsWhole(t *testing.T) {
	ids := []string{"a", "b,c", "d \"e\"", " f", "g"}
	rows := func(base int) func(j int, add func(...string)) {
		return func(j int, add func(...string)) {
			i := base + j
			for r := range i % 3 {
				add(fmt.Sprint(i), ids[i%len(ids)], fmt.Sprint(r))
			}
		}
	}
	header := []string{"obs_index", "obs_id", "rank"}
	var want bytes.Buffer
	ww := bufio.NewWriter(&want)
	if err := csvio.WriteRows(ww, header, 50_000, rows(0)); err != nil {
		t.Fatal(err)
	}
	for _, chunk := range []int{1, 999, 50_000} {
		var got bytes.Buffer
		gw := bufio.NewWriter(&got)
		w := csvio.NewRowsWriter(gw, header)
		for lo := 0; lo < 50_000; lo += chunk {
			if err := w.Write(min(chunk, 50_000-lo), rows(lo)); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil || !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("chunks of %d: %d bytes (%v), want %d", chunk, got.Len(), err, want.Len())
		}
	}
}

// writerAt is a file in memory, written at several offsets at once as a
// file may be.
type writerAt struct {
	mu sync.Mutex
	b  []byte
}

func (w *writerAt) WriteAt(p []byte, off int64) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if end := int(off) + len(p); end > len(w.b) {
		w.b = append(w.b, make([]byte, end-len(w.b))...)
	}
	return copy(w.b[off:], p), nil
}

// The archive written in place is today's, byte for byte.
func TestNPZAtAsWhole(t *testing.T) {
	for name, s := range answerSets(t) {
		for _, kind := range allKinds {
			want, wantErr := wholeNPZ(t, s, kind)
			for _, chunk := range []int{777, max(s.n, 1)} {
				for _, n := range []int{s.n, -1} {
					f := &writerAt{}
					w, err := numpyio.NewNPZAnswerWriterAt(f, kind, s.k, n, t.TempDir())
					if err != nil {
						t.Fatal(err)
					}
					for lo := 0; lo < s.n && err == nil; lo += chunk {
						err = w.Write(s.chunk(lo, min(s.n, lo+chunk)))
					}
					if err == nil {
						err = w.Close()
					}
					if !sameOutput(f.b, err, want, wantErr) {
						t.Errorf("%s, kind %d, chunks of %d, n %d: %d bytes (%v), want %d (%v)", name, kind, chunk, n, len(f.b), err, len(want), wantErr)
					}
				}
			}
		}
	}
}

// WriteAt replaces a file only when the writing succeeds, and leaves no
// temporary file either way.
func TestWriteAtAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.npz")
	os.WriteFile(path, []byte("before"), 0o640)
	s := generatedAnswers(3000, 2, 5)
	write := func(fail bool) error {
		return pointio.WriteAt(context.Background(), path, nil, func(f *os.File) error {
			w, err := numpyio.NewNPZAnswerWriterAt(f, stream.KindKNearest, 2, s.n, dir)
			if err != nil {
				return err
			}
			if err := w.Write(s.chunk(0, 1000)); err != nil || fail {
				w.Abort()
				return errors.New("chunk 2 failed")
			}
			if err := w.Write(s.chunk(1000, s.n)); err != nil {
				return err
			}
			return w.Close()
		}, nil)
	}
	if err := write(true); err == nil {
		t.Fatal("a failed write: no error")
	}
	if got, _ := os.ReadFile(path); string(got) != "before" {
		t.Fatalf("a failed write changed the file: %q", got)
	}
	if err := write(false); err != nil {
		t.Fatal(err)
	}
	want, _ := wholeNPZ(t, s, stream.KindKNearest)
	if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
		t.Fatalf("%d bytes written, want today's %d", len(got), len(want))
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the file's 0640 kept", fi.Mode().Perm())
	}
	if left, _ := os.ReadDir(dir); len(left) != 1 {
		t.Errorf("files left: %v", left)
	}
}
