package index

import (
	"math"

	"github.com/geoknn/geoknn/internal/kernels"
	"github.com/geoknn/geoknn/internal/parallel"
)

// gridSlack covers the float32 rounding of positions and cell bounds in the
// pruning tests; it only makes the search visit slightly more.
const gridSlack = 1e-6

func cellOf(v float32, g int, h float32) int {
	c := int(math.Floor(float64((v + 1) / h)))
	return max(0, min(c, g-1))
}

// SphereRunsTable is the runs table of a G^3 grid: for each column (i, j),
// [lo0, hi0, lo1, hi1], its z-cell runs (lo > hi: empty).
func SphereRunsTable(g int) []int16 {
	runs := make([]int16, 4*g*g)
	for i := 0; i < g; i++ {
		for j := 0; j < g; j++ {
			r, n := sphereRuns(g, i, j)
			q := runs[4*(i*g+j):]
			q[0], q[1], q[2], q[3] = 1, 0, 1, 0
			for k := 0; k < n; k++ {
				q[2*k], q[2*k+1] = int16(r[k][0]), int16(r[k][1])
			}
		}
	}
	return runs
}

// sphereRuns returns the runs of z cells [lo, hi] of column (i, j) that the
// unit sphere (with gridSlack) can cross: where |z| lies between
// sqrt(1 - max(x^2+y^2)) and sqrt(1 - min(x^2+y^2)) over the column.
func sphereRuns(g, i, j int) (runs [2][2]int, n int) {
	h := 2 / float64(g)
	near := func(c int) (lo, hi float64) { // min and max of |v| over cell c's span
		a, b := float64(c)*h-1, float64(c+1)*h-1
		if a <= 0 && b >= 0 {
			return 0, max(-a, b)
		}
		return min(math.Abs(a), math.Abs(b)), max(math.Abs(a), math.Abs(b))
	}
	xlo, xhi := near(i)
	ylo, yhi := near(j)
	rmin2, rmax2 := xlo*xlo+ylo*ylo, xhi*xhi+yhi*yhi
	const s = gridSlack
	if rmin2 > (1+s)*(1+s) {
		return runs, 0
	}
	zhi := math.Sqrt(max(0, (1+s)*(1+s)-rmin2))
	zlo := math.Sqrt(max(0, (1-s)*(1-s)-rmax2))
	cellZ := func(z float64) int { return max(0, min(int(math.Floor((z+1)/h)), g-1)) }
	hiRun := [2]int{cellZ(zlo), cellZ(zhi)}
	loRun := [2]int{cellZ(-zhi), cellZ(-zlo)}
	if loRun[1] >= hiRun[0]-1 { // the runs touch: one run
		return [2][2]int{{loRun[0], hiRun[1]}}, 1
	}
	return [2][2]int{loRun, hiRun}, 2
}

func abs(a int) int {
	if a < 0 {
		return -a
	}
	return a
}

// GridShape is the cell grid of one query: g cells an axis of side h (the
// float32 value every kernel uses, so that all agree on cell bounds).
type GridShape struct {
	G int
	H float32
}

func NewGridShape(g int) GridShape { return GridShape{G: g, H: 2 / float32(g)} }

// Cells is the histogram length: one count a cell and the end sentinel.
func (s GridShape) Cells() int { return s.G*s.G*s.G + 1 }

// ScanSums is the length of the scan's per-chunk totals.
func (s GridShape) ScanSums() int { return ScanSums(s.Cells()) }

// ScanSums is the length of the per-chunk totals of a scan of n counts.
func ScanSums(n int) int { return (n + kernels.GridScanChunk - 1) / kernels.GridScanChunk }

// MaxScan is the most counts one scan takes (grid_scan_sums scans the chunk
// totals in one block).
const MaxScan = kernels.GridScanChunk * kernels.GridScanChunk

// ObsBands is how the observation sort bands m observations: sorted by
// (band, cell), a band being 2^shift consecutive observations, so the
// query's scattered answer writes stay within one band's at a time, which
// the L2 cache holds (32 MB of answers at 2^22). keys is the histogram's
// length: a count for each band's cells and the end sentinel.
type ObsBands struct {
	Shift, Keys int
}

// minBandShift: 2^22 observations' answers fit the L2 of an H100 or H200.
const minBandShift = 22

// SortHistLen is a histogram length that holds bandsFor(m, shape).keys for
// every m up to capacity: the keys grow with m while the bands are 2^22
// observations, and stay within one scan once they widen.
func SortHistLen(capacity int, shape GridShape) int {
	cells := shape.G * shape.G * shape.G
	bands := max(1, (capacity+1<<minBandShift-1)>>minBandShift)
	return max(cells+1, min(bands*cells+1, MaxScan))
}

// BandsFor bands m observations on shape's cells, widening the bands until
// the histogram fits one scan.
func BandsFor(m int, shape GridShape) ObsBands {
	cells := shape.G * shape.G * shape.G
	for shift := minBandShift; ; shift++ {
		bands := max(1, (m+1<<shift-1)>>shift)
		if b := (ObsBands{Shift: shift, Keys: bands*cells + 1}); b.Keys <= MaxScan || bands == 1 {
			return b
		}
	}
}

// occupiedRuns is the runs table of a fitted grid: for each column, its
// occupied z cells as at most two runs, split at the column's longest gap
// of empty cells (a column that crosses the sphere twice has its gap
// between the crossings).
func occupiedRuns(ix *GridIndex, team *parallel.Team) []int16 {
	g := ix.G
	runs := make([]int16, 4*g*g)
	team.Blocks(g*g, 64, func(_, lo, hi int) {
		for col := lo; col < hi; col++ {
			q := runs[4*col : 4*col+4]
			q[0], q[1], q[2], q[3] = 1, 0, 1, 0
			start := ix.Start[col*g : col*g+g+1]
			first, last, gapLo, gapHi := -1, -1, 0, -1
			for k := 0; k < g; k++ {
				if start[k] == start[k+1] {
					continue
				}
				if first < 0 {
					first = k
				} else if k-last-1 > gapHi-gapLo+1 {
					gapLo, gapHi = last+1, k-1
				}
				last = k
			}
			switch {
			case first < 0:
			case gapHi >= gapLo:
				q[0], q[1], q[2], q[3] = int16(first), int16(gapLo-1), int16(gapHi+1), int16(last)
			default:
				q[0], q[1] = int16(first), int16(last)
			}
		}
	})
	return runs
}
