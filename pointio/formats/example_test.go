package formats_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/formats"
	"github.com/geoknn/geoknn/stream"
)

// An output's extension chooses its format, whose writer takes the
// answers a chunk at a time; whole answers are one chunk.
func Example() {
	f, err := formats.ForAnswers("nearest.csv")
	if err != nil {
		fmt.Println(err)
		return
	}
	bw := bufio.NewWriter(os.Stdout)
	w, err := f.Answers(bw, stream.KindNearest, 0, formats.Options{Rows: 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	refs := []uint32{4, 0, 4}
	metres := []float64{1523.25, 12.5, 0.0004}
	a := stream.Answers{N: 3, Nearest: func(i int) (uint32, float64) { return refs[i], metres[i] }}
	if err := w.Write(a); err != nil {
		fmt.Println(err)
		return
	}
	if err := w.Close(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// obs_index,ref_index,distance_m
	// 0,4,1523.250
	// 1,0,12.500
	// 2,4,0.000
}

// Names and extensions no format has are refused with the choices.
func ExampleNamed() {
	_, err := formats.Named("xlsx")
	fmt.Println(err)
	_, err = formats.ForAnswers("answers.csv.gz")
	fmt.Println(err)
	// Output:
	// --out-format "xlsx": want csv, npz, parquet or arrow
	// output answers.csv.gz: unknown format ".gz": name it .csv, .npz, .parquet or .arrow
}

// A stream says its format by its first bytes: here GeoJSON, then CSV
// with an error named as the stream's name ("-", standard input) says.
func ExampleReadReaderIDs() {
	ctx := context.Background()
	pts, _, err := formats.ReadReaderIDs(ctx, strings.NewReader(`{"type": "Point", "coordinates": [8.5403, 47.3779]}`), "-", pointio.ReadOptions{})
	fmt.Println(pts, err)
	_, _, err = formats.ReadReaderIDs(ctx, strings.NewReader("lat,lon\n95.2,8.5\n"), "-", pointio.ReadOptions{})
	fmt.Println(err)
	// Output:
	// [[8.5403 47.3779]] <nil>
	// standard input:2: latitude "95.2" out of range [-90, 90]
}
