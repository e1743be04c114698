package arrowio_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/arrowio"
	"github.com/geoknn/geoknn/stream"
	"github.com/paulmach/orb"
)

// Points written to Parquet (two double columns, lat and lon) and read
// back, as `knn convert` does.
func Example() {
	dir, err := os.MkdirTemp("", "arrowio-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "depots.parquet")
	pts := []orb.Point{{-0.1278, 51.5074}, {2.3522, 48.8566}} // orb: lon, lat
	var b bytes.Buffer
	if err := arrowio.WritePoints(&b, pointio.FormatParquet, pts); err != nil {
		fmt.Println(err)
		return
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		fmt.Println(err)
		return
	}
	back, err := arrowio.ReadFile(context.Background(), path)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range back {
		fmt.Printf("lat %.4f lon %.4f\n", p.Lat(), p.Lon())
	}
	// Output:
	// lat 51.5074 lon -0.1278
	// lat 48.8566 lon 2.3522
}

// Answers streamed a chunk at a time into Parquet: the same bytes as
// writing them all at once, in row groups encoded side by side.
func ExampleNewAnswerWriter() {
	ref := []uint32{7, 3, 7}
	metres := []float64{1200.5, 88.25, 40.0}
	w, err := arrowio.NewAnswerWriter(discard{}, pointio.FormatParquet, stream.KindNearest, 1, arrowio.StreamOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range []struct{ base, n int }{{0, 2}, {2, 1}} {
		a := stream.Answers{Base: c.base, N: c.n, Nearest: func(i int) (uint32, float64) {
			return ref[c.base+i], metres[c.base+i]
		}}
		if err := w.Write(a); err != nil {
			w.Abort()
			fmt.Println(err)
			return
		}
	}
	fmt.Println(w.Close())
	// Output: <nil>
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
