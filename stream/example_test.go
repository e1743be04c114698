package stream_test

import (
	"context"
	"fmt"
	"io"

	"github.com/geoknn/geoknn/stream"
)

// columns is a ChunkReader over columns held in memory, two points a
// chunk: what a reader of any other source implements.
type columns struct {
	lat, lon []float64
	next     int
}

func (c *columns) Next(_ context.Context, _ stream.Chunk) (stream.Chunk, error) {
	if c.next >= len(c.lat) {
		return stream.Chunk{}, io.EOF
	}
	lo, hi := c.next, min(c.next+2, len(c.lat))
	c.next = hi
	return stream.Chunk{Base: int64(lo), Lat: c.lat[lo:hi], Lon: c.lon[lo:hi]}, nil
}

func (c *columns) Rows() int64  { return int64(len(c.lat)) }
func (c *columns) Close() error { return nil }

// printer is an AnswerWriter of nearest answers that prints them.
type printer struct{ next int }

func (p *printer) Write(a stream.Answers) error {
	if err := stream.CheckOrder(&p.next, a); err != nil {
		return err
	}
	for i := range a.N {
		ref, m := a.Nearest(i)
		fmt.Printf("observation %d: reference %d at %.0f m\n", a.Base+i, ref, m)
	}
	return nil
}

func (p *printer) Close() error { return nil }
func (p *printer) Abort()       {}

// A reader's chunks answered and written in order: here every
// observation's "nearest" is reference 0 at its row's distance.
func Example() {
	var r stream.ChunkReader = &columns{lat: []float64{0, 0.1, 0.2}, lon: []float64{0, 0, 0}}
	var w stream.AnswerWriter = &printer{}
	for {
		c, err := r.Next(context.Background(), stream.Chunk{})
		if err == io.EOF {
			break
		}
		a := stream.Answers{Base: int(c.Base), N: c.Len(), Nearest: func(i int) (uint32, float64) { return 0, 1000 * float64(int(c.Base)+i) }}
		if err := w.Write(a); err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Println(w.Close())
	// Output:
	// observation 0: reference 0 at 0 m
	// observation 1: reference 0 at 1000 m
	// observation 2: reference 0 at 2000 m
	// <nil>
}
