package geoknn

import (
	"context"
	"io"
	"slices"
	"testing"

	"github.com/geoknn/geoknn/stream"
)

// recycledChunks hands out obs in chunks of rows, filling the columns the
// caller hands back, as the Parquet reader does.
type recycledChunks struct {
	lat, lon []float64
	rows     int
	next     int
}

func (r *recycledChunks) Next(_ context.Context, dst stream.Chunk) (stream.Chunk, error) {
	if r.next == len(r.lat) {
		return stream.Chunk{}, io.EOF
	}
	hi := min(len(r.lat), r.next+r.rows)
	c := stream.Chunk{Base: int64(r.next), Lat: append(dst.Lat[:0], r.lat[r.next:hi]...), Lon: append(dst.Lon[:0], r.lon[r.next:hi]...)}
	r.next = hi
	return c, nil
}

func (r *recycledChunks) Rows() int64  { return int64(len(r.lat)) }
func (r *recycledChunks) Close() error { return nil }

// A stream whose chunks and answers come round again copies them straight
// to and from page-locked memory once they are pinned: the answers are
// those of one in-memory query, nearest and k nearest.
func TestStreamPinnedAsInMemory(t *testing.T) {
	s, err := NewSearcher(Options{Engine: GPU})
	if err != nil {
		t.Skipf("no GPU: %v", err)
	}
	defer s.Close()
	ctx := context.Background()
	obs, ref := hostPoints(t, 12*(smallQuery+1000), 41), hostPoints(t, 5000, 42)
	x, err := s.NewIndex(ref)
	if err != nil {
		t.Fatal(err)
	}
	lat, lon := obs.Float64()
	for _, q := range []StreamQuery{{}, {K: 3}} {
		var want []uint32
		if q.K == 0 {
			r, err := x.Nearest(ctx, obs)
			if err != nil {
				t.Fatal(err)
			}
			want = r.Index
		} else {
			r, err := x.KNearest(ctx, obs, q.K, 0)
			if err != nil {
				t.Fatal(err)
			}
			want = r.Index
		}
		var got []uint32
		src := &recycledChunks{lat: lat, lon: lon, rows: smallQuery + 1000}
		_, err := x.Stream(ctx, src, func(c stream.Chunk, a stream.Answers) error {
			for i := range a.N {
				if q.K == 0 {
					ref, _ := a.Nearest(i)
					got = append(got, ref)
					continue
				}
				for r := range q.K {
					ref, _, _ := a.KRow(i, r)
					got = append(got, ref)
				}
			}
			return nil
		}, q)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("k %d: %v; answers equal: %v", q.K, err, slices.Equal(got, want))
		}
	}
}
