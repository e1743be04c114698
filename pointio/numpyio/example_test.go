package numpyio_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/geoknn/geoknn/pointio/numpyio"
	"github.com/geoknn/geoknn/stream"
	"github.com/paulmach/orb"
)

// Two processes (an MPI job's ranks, say) write their observations'
// nearest answers into one .npz file at their offsets; the first then
// writes the zip structure from both parts' sums: the archive one
// writer makes of all the answers.
func ExampleNewNPZPartWriter() {
	ref := []uint32{4, 0, 7, 7, 2}
	metres := []float64{120.5, 0, 3001.25, 87.125, 15}
	answers := func(lo, hi int) stream.Answers {
		return stream.Answers{Base: lo, N: hi - lo, Nearest: func(i int) (uint32, float64) { return ref[lo+i], metres[lo+i] }}
	}
	dir, err := os.MkdirTemp("", "parts")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	f, err := os.Create(filepath.Join(dir, "nearest.npz"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	archive := numpyio.NPZArchive{Kind: stream.KindNearest, K: 1, N: len(ref)}
	var sums [][]numpyio.NPZSum
	for _, part := range [][2]int{{0, 3}, {3, 5}} { // each part's process, in any order
		w, err := numpyio.NewNPZPartWriter(f, archive, part[0], 0, part[0] == 0)
		if err == nil {
			err = w.Write(answers(part[0], part[1]))
		}
		if err == nil {
			err = w.Close()
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		sums = append(sums, w.Sums()) // gathered to the first process
	}
	if err := numpyio.FinishNPZ(f, archive, sums); err != nil {
		fmt.Println(err)
		return
	}
	var whole bytes.Buffer
	if err := numpyio.WriteResultsNPZ(&whole, len(ref), answers(0, len(ref)).Nearest); err != nil {
		fmt.Println(err)
		return
	}
	got, _ := os.ReadFile(f.Name())
	fmt.Println(bytes.Equal(got, whole.Bytes()))
	// Output: true
}

// Points written as one (N, 2) array, latitude then longitude, read back
// as numpy.load reads it: the same float64 values, in order.
func ExampleReadNPY() {
	pts := []orb.Point{{8.5403, 47.3779}, {2.3553, 48.8809}}
	var b bytes.Buffer
	if err := numpyio.WritePointsNPY(&b, pts); err != nil {
		fmt.Println(err)
		return
	}
	got, err := numpyio.ReadNPY(&b, "stations.npy", int64(b.Len()), false)
	fmt.Println(got, err)
	// Output: [[8.5403 47.3779] [2.3553 48.8809]] <nil>
}
