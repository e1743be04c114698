package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/geoknn/geoknn/internal/index"
)

// fromVector appends the radians of the direction (x, y, z) to p.
func fromVector(p *index.Points, x, y, z float64) {
	n := math.Sqrt(x*x + y*y + z*z)
	p.Lat64 = append(p.Lat64, math.Asin(z/n))
	p.Lon64 = append(p.Lon64, math.Atan2(y, x))
}

// onFaceEdges is n points on the cube map's seams: the edges and corners
// of its faces, and the edges of the cells of side cells a face edge.
func onFaceEdges(n, side int, rng *rand.Rand) index.Points {
	var p index.Points
	for len(p.Lat64) < n {
		s := []float64{1, -1}[rng.IntN(2)]
		var u, v float64
		switch rng.IntN(3) {
		case 0: // a face edge or corner
			u, v = []float64{-1, 1}[rng.IntN(2)], []float64{-1, 1, rng.Float64()*2 - 1}[rng.IntN(3)]
		default: // a cell edge
			u, v = -1+2*float64(rng.IntN(side+1))/float64(side), rng.Float64()*2-1
		}
		c := [3]float64{s, u, v}
		a := rng.IntN(3)
		fromVector(&p, c[a], c[(a+1)%3], c[(a+2)%3])
	}
	return p
}

// The cube has cells for the job's size, fewer where the references are
// skewed, within its bounds.
func TestCellsSideFor(t *testing.T) {
	for _, tc := range []struct {
		nobs, nref int
		skewed     bool
		want       int
	}{
		{1, 1, false, 4},
		{1 << 27, 1 << 16, false, 147}, // about 2 cells a reference
		{1 << 27, 1 << 16, true, 74},
		{1 << 27, 1 << 20, false, 295}, // about 0.5
		{1 << 10, 1 << 16, false, 52},  // at least 0.25
		{1 << 27, 1 << 10, false, 18},  // at most 2
		{1 << 30, 1 << 24, false, index.MaxCellsSide},
	} {
		if got := index.CellsSideFor(tc.nobs, tc.nref, tc.skewed); got != tc.want {
			t.Errorf("cellsSideFor(%d, %d, %v) = %d, want %d", tc.nobs, tc.nref, tc.skewed, got, tc.want)
		}
	}
}
