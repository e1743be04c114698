package csvio

import (
	"bufio"
	"bytes"
	"testing"

	"github.com/geoknn/geoknn/stream"
)

func TestWriteKResults(t *testing.T) {
	row := func(i, r int) (uint32, float64, bool) {
		if i == 1 && r > 0 { // beyond the limit
			return 0, 0, false
		}
		return uint32(10*i + r), float64(i) + float64(r)/2, true
	}
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	if err := WriteKResults(w, 2, 2, row); err != nil {
		t.Fatal(err)
	}
	want := "obs_index,rank,ref_index,distance_m\n0,1,0,0.000\n0,2,1,0.500\n1,1,10,1.000\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestWriteWithin(t *testing.T) {
	counts, offsets, index := []uint32{2, 0, 1}, []uint64{0, 2, 2, 3}, []uint32{7, 3, 9}
	in := stream.Within{Count: func(i int) int { return int(counts[i]) },
		Ref: func(i, r int) (uint32, float64) { e := int(offsets[i]) + r; return index[e], float64(e) }}
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	if err := WriteWithinCounts(w, 3, in); err != nil || b.String() != "obs_index,count\n0,2\n1,0\n2,1\n" {
		t.Errorf("counts: %v %q", err, b.String())
	}
	b.Reset()
	if err := WriteWithinLists(w, 3, in); err != nil || b.String() != ResultsHeader+"\n0,7,0.000\n0,3,1.000\n2,9,2.000\n" {
		t.Errorf("lists: %v %q", err, b.String())
	}
}

func TestWriteKResultsOne(t *testing.T) {
	row := func(i, r int) (uint32, float64, bool) { return 5, 1.5, i == 0 }
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	if err := WriteKResults(w, 2, 1, row); err != nil || b.String() != ResultsHeader+"\n0,5,1.500\n1,-1,\n" {
		t.Errorf("%v %q", err, b.String())
	}
}
