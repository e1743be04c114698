package cpu

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/index"
)

// KNearest answers the k nearest references of every observation within
// maxRad radians (math.Inf(1): no limit), exactly, on the CPU: the grid
// widens its shells until the k-th best is proven (Brute: every reference).
// Exact duplicates among the references are listed one by one.
func (c *CPU) KNearest(ctx context.Context, req engine.Request, maxRad float64, out engine.KResult) (engine.Stats, error) {
	start := time.Now()
	k := out.K
	if err := engine.CheckK(req, maxRad, out); err != nil {
		return engine.Stats{}, err
	}
	refs := req.All()
	var search func(p [3]float64, t *index.TopK) []index.Neighbour
	if err := stoppable(ctx, func() { search = c.kSearch(req, refs, k, maxRad) }); err != nil {
		return engine.Stats{}, err
	}
	st, err := c.run(ctx, request{Request: req}, cpuBatch, start, func() func(lo, hi int) {
		t := &index.TopK{}
		return func(lo, hi int) {
			for i := lo; i < hi; i++ {
				x, y, z := index.Unit(req.Obs.At(i))
				fillRow(out, i, search([3]float64{x, y, z}, t))
			}
		}
	})
	st.Note = kIndexNote(req, refs.N)
	return st, err
}

// kIndexNote names the index kSearch ranks with. The note describes the
// index only: the query itself (its k, radius in metres, own point left
// out) is the caller's to state in the caller's terms.
func kIndexNote(req engine.Request, nref int) string {
	switch {
	case req.Algorithm == engine.Brute:
		return "brute force"
	case req.GridSide > 0:
		side := index.CappedSide(req.GridSide, nref)
		return fmt.Sprintf("grid %d^3 cells", side)
	}
	return "k-d tree"
}

// kSearch is the per-observation k-nearest search of the request's
// algorithm: brute force, a fitted grid of the side the request fixes, or
// else the k-d tree, which ranks fewer references than the grid walk on
// every set measured (BENCHMARKS.md, "Skewed references on the CPU").
func (c *CPU) kSearch(req engine.Request, refs *index.RefSet, k int, maxRad float64) func(p [3]float64, t *index.TopK) []index.Neighbour {
	maxD2 := index.ChordLimit(maxRad)
	if req.Algorithm == engine.Brute {
		return func(p [3]float64, t *index.TopK) []index.Neighbour { return bruteK(p, refs, k, maxD2, t) }
	}
	if req.GridSide > 0 {
		ix := index.BuildFittedGrid(refs, index.CappedSide(req.GridSide, refs.N))
		return func(p [3]float64, t *index.TopK) []index.Neighbour { return ix.KNearest(p, k, maxD2, t) }
	}
	tr := req.AllTree(refs)
	return func(p [3]float64, t *index.TopK) []index.Neighbour { return tr.KNearest(p, k, maxD2, t) }
}

// bruteK ranks every reference.
func bruteK(p [3]float64, refs *index.RefSet, k int, maxD2 float64, t *index.TopK) []index.Neighbour {
	t.K, t.Items = k, t.Items[:0]
	for j := range refs.X {
		if d := index.Chord2(p[0], p[1], p[2], refs.X[j], refs.Y[j], refs.Z[j]); d <= maxD2 {
			t.Offer(index.Neighbour{D2: d, ID: uint32(j)})
		}
	}
	return t.Sorted()
}

// fillRow writes observation i's neighbours into its row of out.
func fillRow(out engine.KResult, i int, ns []index.Neighbour) {
	row, dist := out.Index[i*out.K:(i+1)*out.K], out.Distance[i*out.K:(i+1)*out.K]
	for j := range row {
		if j < len(ns) {
			row[j], dist[j] = ns[j].ID, float32(index.ChordToAngle(ns[j].D2))
		} else {
			row[j], dist[j] = engine.NoNeighbour, float32(math.Inf(1))
		}
	}
}

// Within answers, for every observation, the references within rad
// radians (the boundary decided on the float64 angle: a reference at
// distance rad is in), their count and, with list, the references
// themselves, exactly, on the CPU.
func (c *CPU) Within(ctx context.Context, req engine.Request, rad float64, list bool) (engine.WithinResult, engine.Stats, error) {
	start := time.Now()
	if err := engine.CheckPoints(req, true); err != nil {
		return engine.WithinResult{}, engine.Stats{}, err
	}
	if !(rad >= 0) || math.IsInf(rad, 1) {
		return engine.WithinResult{}, engine.Stats{}, fmt.Errorf("radius %v rad: want a finite distance, 0 or more", rad)
	}
	n := req.Obs.Len()
	refs := req.All()
	side := c.radiusSide(req, refs.N)
	maxD2 := index.ChordLimit(rad)
	// A radius of more than two cells of the planned grid goes through the
	// k-d tree, which skips boxes beyond it and counts a box wholly inside
	// at once; the grid ranks every reference in every cell it visits. One
	// of the two is built.
	var tree *index.KDTree
	var ix *index.GridIndex
	if _, cube := index.FittedCube(refs); req.GridSide == 0 && math.Sqrt(maxD2) > 2*cube/float64(side) {
		tree = req.AllTree(refs)
	} else {
		ix = req.AllGrid(refs, side)
	}
	res := engine.WithinResult{Counts: make([]uint32, n)}
	batches := make([][]index.Neighbour, (n+cpuBatch-1)/cpuBatch)
	st, err := c.run(ctx, request{Request: req}, cpuBatch, start, func() func(lo, hi int) {
		var scratch []index.Neighbour
		return func(lo, hi int) {
			var found []index.Neighbour
			for i := lo; i < hi; i++ {
				x, y, z := index.Unit(req.Obs.At(i))
				p := [3]float64{x, y, z}
				switch {
				case !list && tree != nil:
					res.Counts[i] = tree.Count(p, maxD2)
					continue
				case !list:
					res.Counts[i] = ix.Count(p, maxD2)
					continue
				case tree != nil:
					scratch = tree.Within(p, maxD2, scratch[:0])
				default:
					scratch = ix.Within(p, maxD2, scratch[:0])
				}
				res.Counts[i] = uint32(len(scratch))
				found = append(found, scratch...)
			}
			batches[lo/cpuBatch] = found
		}
	})
	if err != nil {
		return engine.WithinResult{}, st, err
	}
	if list {
		res.Gather(batches)
	}
	st.Note = "k-d tree"
	if ix != nil {
		st.Note = fmt.Sprintf("grid %d^3 cells", side)
	}
	return res, st, nil
}

// radiusSide is the request's grid side, or one of about two references a
// cell the sphere crosses.
func (c *CPU) radiusSide(req engine.Request, nref int) int {
	if req.GridSide > 0 {
		return index.CappedSide(req.GridSide, nref)
	}
	return max(4, index.GridSide(nref, 2))
}
