package readertest

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/stream"
	"github.com/paulmach/orb"
)

// AddSamples adds the files of dir with the given extension to the
// fuzz corpus.
func AddSamples(f *testing.F, dir, ext string) {
	paths, _ := filepath.Glob(filepath.Join(dir, "*"+ext))
	for _, p := range paths {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
}

// CheckResult checks the contract shared by the readers: either valid
// points or an error, never both, and content errors are *pointio.InputErrors.
func CheckResult(t *testing.T, pts []orb.Point, err error) {
	t.Helper()
	if err != nil {
		if pts != nil {
			t.Fatalf("points %v returned with error %v", pts, err)
		}
		var ie *pointio.InputError
		if !errors.As(err, &ie) {
			t.Fatalf("error %q (%T) is not an *pointio.InputError", err, err)
		}
		if ie.Error() == "" || ie.Reason == "" {
			t.Fatalf("error without a reason: %#v", ie)
		}
		return
	}
	if len(pts) == 0 {
		t.Fatal("no points and no error")
	}
	for i, p := range pts {
		lon, lat := p.Lon(), p.Lat()
		if math.IsNaN(lon) || math.IsNaN(lat) || lon < -180 || lon > 180 || lat < -90 || lat > 90 {
			t.Fatalf("point %d = %v is not a valid coordinate", i, p)
		}
	}
}

// ChunkLens is the sizes of r's chunks, in order, r closed after; an
// error other than the end fails t.
func ChunkLens(t *testing.T, r stream.ChunkReader) []int {
	t.Helper()
	defer r.Close()
	var lens []int
	var c stream.Chunk
	for {
		var err error
		if c, err = r.Next(context.Background(), c); err == io.EOF {
			return lens
		} else if err != nil {
			t.Fatal(err)
		}
		lens = append(lens, c.Len())
	}
}

// GridPoints is n valid points stepping through the degrees: longitude
// i mod 360 - 180, latitude i mod 180 - 90.
func GridPoints(n int) []orb.Point {
	pts := make([]orb.Point, n)
	for i := range pts {
		pts[i] = orb.Point{float64(i%360) - 180, float64(i%180) - 90}
	}
	return pts
}
