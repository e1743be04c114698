package cpu

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/parallel"
)

// The CPU grid query in cell order, as the GPU runs it: a chunk of
// observations is sorted by cell, and the observations of one cell share the
// work of their first two shells. The references of the cell's 3 x 3 x 3
// neighbourhood are gathered once into a tile, every observation of the
// cell ranks the whole tile by dot product in a branch-free AVX2 loop
// (three observations at a time, lanes3AVX2), and the stop test after shell 1 then
// holds for nearly all of them; the few it does not go on with the shell
// walk from shell 2. Per observation this leaves the unit vector, a few
// dozen vector pairs and the answer, instead of a walk over 15 cells.
//
// The answer is the walk's: the tile is every reference of shells 0 and 1,
// a winner whose dot product leads the runner-up by no more than dotMargin
// is re-ranked by chord2 with ties to the lowest index, and the stop test
// proves that nothing outside is nearer.

const (
	cellChunk     = 1 << 19 // observations sorted together: 64 bytes each
	cellColsBlock = 8       // grid columns a goroutine takes at a time
	cellOrderMin  = 1 << 14 // fewer observations walk the grid one by one
)

// cellRec is an observation of a chunk: its unit vector, cell and position
// in the chunk.
type cellRec struct {
	x, y, z   float64
	cell, pos uint32
}

// cellOrder is one chunk of observations sorted by grid column: sorted[
// colStart[c] : colStart[c+1]] are those of column c. Sorting the records,
// not an index into them, keeps every later pass sequential in memory.
type cellOrder struct {
	recs, sorted []cellRec
	colStart     []uint32
	// Kept from chunk to chunk: a column histogram a block of the sort, and
	// a scratch a goroutine of the ranking.
	hist    [][]uint32
	scratch []*cellScratch
}

func newCellOrder(n, cols int) *cellOrder {
	return &cellOrder{recs: make([]cellRec, n), sorted: make([]cellRec, n), colStart: make([]uint32, cols+1)}
}

// nearestGridCells answers the request through ix in chunks of cellChunk
// observations.
func (c *CPU) nearestGridCells(ctx context.Context, req request, out engine.Result, refs *index.RefSet, ix *index.GridIndex, start time.Time) (engine.Stats, error) {
	co := newCellOrder(min(req.Obs.Len(), cellChunk), ix.G*ix.G)
	chunks, err := inCellChunks(ctx, req, func(lo, hi int) {
		co.prepare(req.Obs, lo, hi, ix, c.workers)
	}, func(lo, hi int) error {
		return co.answer(ctx, lo, ix, refs, out, c.workers)
	})
	if err != nil {
		return engine.Stats{}, err
	}
	return c.stats(chunks, start), nil
}

// inCellChunks runs a large query's chunks of cellChunk observations: sort
// (traced as the sort by cell) then answer (traced as the query), with the
// progress after each; it returns the chunks run.
func inCellChunks(ctx context.Context, req request, sort func(lo, hi int), answer func(lo, hi int) error) (int, error) {
	n, chunks := req.Obs.Len(), 0
	for lo := 0; lo < n; lo += cellChunk {
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("cpu engine: %w", err)
		}
		hi := min(lo+cellChunk, n)
		t := time.Now()
		sort(lo, hi)
		req.Trace.Add("host", "sort by cell", t, time.Since(t))
		t = time.Now()
		err := answer(lo, hi)
		if err == nil {
			err = ctx.Err()
		}
		if err != nil {
			return 0, fmt.Errorf("cpu engine: %w", err)
		}
		req.Trace.Add("host", "query", t, time.Since(t))
		if req.Progress != nil {
			req.Progress(hi, n)
		}
		chunks++
	}
	return chunks, nil
}

// prepare fills the chunk with observations [lo, hi): unit vectors, cells,
// and the order by column (a counting sort with one histogram a block).
func (co *cellOrder) prepare(obs index.Points, lo, hi int, ix *index.GridIndex, workers int) {
	m, g := hi-lo, ix.G
	cols := g * g
	blocks := parallel.Workers(m, 1<<14, workers) * 2
	per := (m + blocks - 1) / blocks
	blocks = (m + per - 1) / per // the blocks Blocks makes of [0, m)
	for len(co.hist) < blocks {
		co.hist = append(co.hist, make([]uint32, cols))
	}
	hist := co.hist[:blocks]
	parallel.Blocks(m, per, workers, func(_, a, b int) {
		h := hist[a/per]
		clear(h)
		for k := a; k < b; k++ {
			x, y, z := index.Unit(obs.At(lo + k))
			cell := uint32(ix.CellOf(x, y, z))
			co.recs[k] = cellRec{x: x, y: y, z: z, cell: cell, pos: uint32(k)}
			h[cell/uint32(g)]++
		}
	})
	// Each block's offset in each column: columns in order, blocks in order
	// within a column, so the sort is stable.
	var run uint32
	for col := 0; col < cols; col++ {
		co.colStart[col] = run
		for _, h := range hist {
			h[col], run = run, run+h[col]
		}
	}
	co.colStart[cols] = run
	parallel.Blocks(m, per, workers, func(_, a, b int) {
		h := hist[a/per]
		for _, r := range co.recs[a:b] {
			col := r.cell / uint32(g)
			co.sorted[h[col]] = r
			h[col]++
		}
	})
}

// answer ranks the chunk's observations (request indices from first on)
// column by column on the engine's goroutines.
func (co *cellOrder) answer(ctx context.Context, first int, ix *index.GridIndex, refs *index.RefSet, out engine.Result, workers int) error {
	cols := ix.G * ix.G
	for len(co.scratch) < parallel.Workers(cols, cellColsBlock, workers) {
		co.scratch = append(co.scratch, newCellScratch(ix.G))
	}
	scratch := co.scratch
	parallel.Blocks(cols, cellColsBlock, workers, func(wk, a, b int) {
		if ctx.Err() != nil {
			return
		}
		s := scratch[wk]
		for col := a; col < b; col++ {
			s.column(co, col, first, ix, refs, out)
		}
	})
	return ctx.Err()
}

// cellScratch is one goroutine's working set: the observations of a column
// bucketed by z cell and the tile of a cell's neighbourhood.
type cellScratch struct {
	zStart []uint32 // z cell k: byZ[zStart[k] .. zStart[k+1]]
	byZ    []uint32 // the column's observations by z cell
	tile   refTile
	ids    []uint32         // the tile's distinct-reference indices
	q      index.GridSearch // the walk of an observation the tile does not settle
}

func newCellScratch(g int) *cellScratch {
	return &cellScratch{zStart: make([]uint32, g+2)}
}

// column answers the chunk's observations in grid column col, cell by cell.
func (s *cellScratch) column(co *cellOrder, col, first int, ix *index.GridIndex, refs *index.RefSet, out engine.Result) {
	in := co.sorted[co.colStart[col]:co.colStart[col+1]]
	if len(in) == 0 {
		return
	}
	g := uint32(ix.G)
	clear(s.zStart)
	for _, r := range in {
		s.zStart[r.cell%g+2]++
	}
	for k := 2; k < len(s.zStart); k++ {
		s.zStart[k] += s.zStart[k-1]
	}
	if cap(s.byZ) < len(in) {
		s.byZ = make([]uint32, 2*len(in))
	}
	s.byZ = s.byZ[:len(in)]
	for e, r := range in {
		z := r.cell%g + 1
		s.byZ[s.zStart[z]] = uint32(e)
		s.zStart[z]++
	}
	for z := 0; z < ix.G; z++ {
		if cell := s.byZ[s.zStart[z]:s.zStart[z+1]]; len(cell) > 0 {
			c := [3]int{col / ix.G, col % ix.G, z}
			s.gather(ix, c)
			s.rank(in, cell, c, first, ix, refs, out)
		}
	}
}

// gather fills the tile with the references of the cells within one cell
// (Chebyshev) of (i, j, k) that the sphere crosses: shells 0 and 1.
func (s *cellScratch) gather(ix *index.GridIndex, c [3]int) {
	i, j, k := c[0], c[1], c[2]
	t := &s.tile
	t.x, t.y, t.z, s.ids = t.x[:0], t.y[:0], t.z[:0], s.ids[:0]
	g := ix.G
	for ci := max(i-1, 0); ci <= min(i+1, g-1); ci++ {
		for cj := max(j-1, 0); cj <= min(j+1, g-1); cj++ {
			col := ci*g + cj
			runs := ix.Runs[4*col : 4*col+4]
			for h := 0; h < 2; h++ {
				lo, hi := max(int(runs[2*h]), k-1), min(int(runs[2*h+1]), k+1)
				if lo > hi {
					continue
				}
				p0, p1 := ix.Start[col*g+lo], ix.Start[col*g+hi+1]
				t.x, t.y, t.z = append(t.x, ix.X[p0:p1]...), append(t.y, ix.Y[p0:p1]...), append(t.z, ix.Z[p0:p1]...)
				s.ids = append(s.ids, ix.ID[p0:p1]...)
			}
		}
	}
	if index.HaveAVX2FMA { // whole groups of four for lanes3AVX2, which skips NaN
		for len(t.x)%4 != 0 {
			t.x, t.y, t.z = append(t.x, math.NaN()), append(t.y, math.NaN()), append(t.z, math.NaN())
		}
	}
}

// rank answers the observations recs[e] for e in cell, all in cell c,
// whose neighbourhood is in the tile: three at a time against the whole
// tile, then each finished.
func (s *cellScratch) rank(recs []cellRec, cell []uint32, c [3]int, first int, ix *index.GridIndex, refs *index.RefSet, out engine.Result) {
	t := refTile{x: s.tile.x, y: s.tile.y, z: s.tile.z}
	var st lanes3
	for a := 0; a < len(cell); a += 3 {
		var o [9]float64
		for k := range 3 {
			r := &recs[cell[min(a+k, len(cell)-1)]] // a last triple padded with copies
			o[3*k], o[3*k+1], o[3*k+2] = r.x, r.y, r.z
		}
		rankLanes3(&st, &o, t)
		for k := 0; k < 3 && a+k < len(cell); k++ {
			r := &recs[cell[a+k]]
			d, id := s.finish(r, c, &st, k, ix)
			out.Index[first+int(r.pos)] = refs.Orig[id]
			out.Distance[first+int(r.pos)] = float32(index.ChordToAngle(d))
		}
	}
}

// finish turns observation r's tile ranking (lane state k of st) into the
// exact answer: the winner's chord2 (or the tile re-ranked by chord2 when
// the lead is within dotMargin), then the shell walk from shell 2 unless
// the stop test after shell 1 already holds. It returns the squared chord
// and the distinct reference's index.
func (s *cellScratch) finish(r *cellRec, c [3]int, st *lanes3, k int, ix *index.GridIndex) (float64, uint32) {
	best, runup, e := st.result(k)
	q := &s.q // set field by field: a composite literal stalled on store forwarding
	q.Ix = ix
	q.P[0], q.P[1], q.P[2] = r.x, r.y, r.z
	q.C = c
	switch {
	case math.IsInf(best, -1): // an empty neighbourhood: the walk does it all
		return ix.Nearest(r.x, r.y, r.z, nil)
	case best-runup <= dotMargin:
		q.Best, q.BestID = math.Inf(1), math.MaxUint32
		for e, id := range s.ids {
			d := index.Chord2(r.x, r.y, r.z, s.tile.x[e], s.tile.y[e], s.tile.z[e])
			if d < q.Best || (d == q.Best && id < q.BestID) {
				q.Best, q.BestID = d, id
			}
		}
	default:
		q.Best, q.BestID = index.Chord2(r.x, r.y, r.z, s.tile.x[e], s.tile.y[e], s.tile.z[e]), s.ids[e]
	}
	q.Thr2 = ix.ChordBound(q.Best)
	for sh := 2; sh < ix.G && !q.Done(sh-1); sh++ {
		q.Shell(sh)
	}
	return q.Best, q.BestID
}
