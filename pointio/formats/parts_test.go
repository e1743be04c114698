package formats

import (
	"bufio"
	"bytes"
	"strconv"
	"testing"

	"github.com/geoknn/geoknn/pointio/csvio"
	"github.com/geoknn/geoknn/pointio/numpyio"
	"github.com/geoknn/geoknn/stream"
)

// partCuts are ways to cut n observations among 3 parts: even, uneven,
// with empty parts.
func partCuts(n int) [][]int {
	return [][]int{{0, n / 3, 2 * n / 3, n}, {0, 0, n / 2, n}, {0, n, n, n}, {0, 1, 1, n}}
}

// Parts of a CSV written one after the other, and parts of an .npz
// written at their offsets with FinishNPZ's structure around them, are
// the whole-answer writers' bytes.
func TestPartsAsWhole(t *testing.T) {
	for name, s := range answerSets(t) {
		for _, kind := range allKinds {
			wantCSV, csvErr := wholeCSV(t, s, kind)
			wantNPZ, npzErr := wholeNPZ(t, s, kind)
			if csvErr != nil || npzErr != nil {
				continue // refused whole: the parts' writers refuse alike
			}
			for _, cuts := range partCuts(s.n) {
				if cuts[1] > s.n {
					continue
				}
				if got := csvParts(t, s, kind, cuts); !bytes.Equal(got, wantCSV) {
					t.Errorf("%s, kind %d, cuts %v: CSV parts differ (%d bytes, want %d)", name, kind, cuts, len(got), len(wantCSV))
				}
				if got := npzParts(t, s, kind, cuts); !bytes.Equal(got, wantNPZ) {
					t.Errorf("%s, kind %d, cuts %v: npz parts differ (%d bytes, want %d)", name, kind, cuts, len(got), len(wantNPZ))
				}
			}
		}
	}
}

func csvParts(t *testing.T, s *answerSet, kind stream.AnswerKind, cuts []int) []byte {
	var b bytes.Buffer
	for p := range len(cuts) - 1 {
		bw := bufio.NewWriter(&b)
		w, err := csvio.NewAnswerPartWriter(bw, kind, s.k, cuts[p], p == 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(s.chunk(cuts[p], cuts[p+1])); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

func npzParts(t *testing.T, s *answerSet, kind stream.AnswerKind, cuts []int) []byte {
	a := numpyio.NPZArchive{Kind: kind, K: s.k, N: s.n}
	entries := make([]int64, len(cuts)) // before each cut
	for p := range len(cuts) - 1 {
		entries[p+1] = entries[p]
		for i := cuts[p]; i < cuts[p+1]; i++ {
			entries[p+1] += int64(len(s.lists[i]))
		}
	}
	if kind == stream.KindWithinLists {
		a.Entries = entries[len(cuts)-1]
	}
	f := &writerAt{}
	var sums [][]numpyio.NPZSum
	for p := len(cuts) - 2; p >= 0; p-- { // in any order
		w, err := numpyio.NewNPZPartWriter(f, a, cuts[p], entries[p], p == 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(s.chunk(cuts[p], cuts[p+1])); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		sums = append([][]numpyio.NPZSum{w.Sums()}, sums...)
	}
	if err := numpyio.FinishNPZ(f, a, sums); err != nil {
		t.Fatal(err)
	}
	return f.b
}

// Parts of a CSV of rows with identifiers, one after the other, are
// WriteRows's output.
func TestCSVRowsPartsAsWhole(t *testing.T) {
	header := []string{"obs_index", "obs_id"}
	rows := func(base int) func(j int, add func(...string)) {
		return func(j int, add func(...string)) {
			for range (base + j) % 3 {
				add(strconv.Itoa(base+j), "id,"+strconv.Itoa(base+j))
			}
		}
	}
	var want bytes.Buffer
	ww := bufio.NewWriter(&want)
	if err := csvio.WriteRows(ww, header, 5000, rows(0)); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	for p, cuts := 0, []int{0, 1234, 1234, 5000}; p < len(cuts)-1; p++ {
		gw := bufio.NewWriter(&got)
		w := csvio.NewRowsPartWriter(gw, header, p == 0)
		if err := w.Write(cuts[p+1]-cuts[p], rows(cuts[p])); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("%d bytes, want %d", got.Len(), want.Len())
	}
}
