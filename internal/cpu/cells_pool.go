package cpu

import (
	"math"

	"github.com/geoknn/geoknn/internal/index"
)

// facePool is the references near a tile of face cells, gathered by one
// walk of the grid or the tree for all its cells, and one cell's chords to
// them: a
// cell then scans a few hundred references in a row, four at a time,
// instead of walking the tree, whose boxes' tests branch past prediction.
// The arrays are padded to whole groups of four with references far from
// every cell.
type facePool struct {
	x, y, z []float64
	id      []uint32
	d2      []float64 // the chords from the centre of the cell at hand
	found   []int32   // the cell at hand's first-filter survivors, by place
}

// facePoolPad is the coordinate of the padding: its squared chord from
// any unit vector is above 35, beyond the ball of every cell of a tile
// (sides of 2 cells or more: squared chords below 11; a one-cell tile of a
// face of one cell: below 15).
const facePoolPad = 4

// gather fills the pool with the references within chord r of p, in the
// tree's order; it stops and returns false past most.
func (pl *facePool) gather(t *index.KDTree, p [3]float64, r float64, most int) bool {
	limit := index.FittedChordBound(r * r)
	pl.reset()
	all := t.LeavesWithin(p, limit, func(start, end int32) bool {
		return pl.take(p, limit, t.KDColumns.Slice(int(start), int(end)), most)
	})
	if all {
		pl.pad()
	}
	return all
}

// reset empties the pool.
func (pl *facePool) reset() { pl.x, pl.y, pl.z, pl.id = pl.x[:0], pl.y[:0], pl.z[:0], pl.id[:0] }

// pad fills the pool to whole groups of four with references far from
// every cell.
func (pl *facePool) pad() {
	for len(pl.id)%4 != 0 {
		pl.x, pl.y, pl.z = append(pl.x, facePoolPad), append(pl.y, facePoolPad), append(pl.z, facePoolPad)
		pl.id = append(pl.id, math.MaxUint32)
	}
}

// take adds the references of cols within the squared chord limit of p,
// unless the pool could then pass most: false.
func (pl *facePool) take(p [3]float64, limit float64, cols index.KDColumns, most int) bool {
	if len(pl.id)+len(cols.ID) > most {
		return false
	}
	for k := range cols.ID {
		if index.Chord2(p[0], p[1], p[2], cols.X[k], cols.Y[k], cols.Z[k]) <= limit {
			pl.x, pl.y, pl.z = append(pl.x, cols.X[k]), append(pl.y, cols.Y[k]), append(pl.z, cols.Z[k])
			pl.id = append(pl.id, cols.ID[k])
		}
	}
	return true
}

// nearest is the pool's nearest reference to p, the first in the pool's
// order of equally near ones: its squared chord and place. It leaves every
// reference's chord from p in pl.d2.
func (pl *facePool) nearest(p *[3]float64) (float64, int) {
	pl.d2 = index.Grow(pl.d2, len(pl.id))
	return poolChords(p, pl.x, pl.y, pl.z, pl.d2)
}

// survivors sets pl.found to the places of the references within the
// cell's ball that q0 does not beat at every corner, as c says them.
func (pl *facePool) survivors(c *facePoolCell) {
	pl.found = index.Grow(pl.found, len(pl.id))
	pl.found = pl.found[:poolSurvivors(c, pl.x, pl.y, pl.z, pl.d2, pl.found)]
}

// facePoolCell is a cell's first filter for the vector scan, each value in
// four lanes: its corners' x, y and z; the dot products below which a
// reference is beaten at each corner (q0's, less faceDomEps); and its
// ball's squared chord. The offsets are poolSurvivorsAVX2's.
type facePoolCell struct {
	corner [4][3][4]float64
	beaten [4][4]float64
	need2  [4]float64
}

// set makes c the filter of the cell of geometry g, with q0's corner dots
// dq and the ball's squared chord need2.
func (c *facePoolCell) set(g *faceGeom, dq *[4]float64, need2 float64) {
	for k := range 4 {
		for a := range 3 {
			c.corner[k][a] = [4]float64{g.corner[k][a], g.corner[k][a], g.corner[k][a], g.corner[k][a]}
		}
		b := dq[k] - faceDomEps
		c.beaten[k] = [4]float64{b, b, b, b}
	}
	c.need2 = [4]float64{need2, need2, need2, need2}
}

// poolChordsGo is poolChords without vectors: the same bits and place.
func poolChordsGo(p *[3]float64, x, y, z, d2 []float64) (float64, int) {
	best, at := math.Inf(1), 0
	for k := range d2 {
		d := index.Chord2(p[0], p[1], p[2], x[k], y[k], z[k])
		d2[k] = d
		if d < best {
			best, at = d, k
		}
	}
	return best, at
}

// faceKeptMax bounds the second filter's stop: faceCap+1 in whole groups
// of four.
const faceKeptMax = (faceCap + 4) &^ 3

// secondFilterGo writes into at the places of the survivors (nearest the
// centre first) that no earlier kept one beats at every corner, stopping
// at stop; it returns how many.
func secondFilterGo(surv []faceSurvivor, stop int, at *[faceKeptMax]int32) int {
	var kept [faceKeptMax][4]float64
	m := 0
	for t := range surv {
		dt := &surv[t].dots
		beaten := false
		for q := range m {
			if beats(&kept[q], dt) {
				beaten = true
				break
			}
		}
		if !beaten {
			kept[m], at[m] = *dt, int32(t)
			if m++; m == min(stop, faceKeptMax) {
				break
			}
		}
	}
	return m
}

// poolSurvivorsGo is poolSurvivors without vectors: the same places. The
// conversions keep each product rounded on its own, as the vector scan
// does, where the compiler would fuse them.
func poolSurvivorsGo(c *facePoolCell, x, y, z, d2 []float64, out []int32) int {
	m := 0
	for k := range d2 {
		if !(d2[k] <= c.need2[0]) {
			continue
		}
		beaten := true
		for q := range 4 {
			cq := &c.corner[q]
			dot := float64(float64(cq[0][0]*x[k])+float64(cq[1][0]*y[k])) + float64(cq[2][0]*z[k])
			if !(dot < c.beaten[q][0]) {
				beaten = false
				break
			}
		}
		if !beaten {
			out[m] = int32(k)
			m++
		}
	}
	return m
}
