package cpu

import (
	"context"
	"fmt"
	"time"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/index"
)

// nearestGrid answers a grid query on the CPU: goroutines over batches of
// observations, float64 throughout, the same answer as brute force.
func (c *CPU) nearestGrid(ctx context.Context, req request, out engine.Result, refs *index.RefSet, start time.Time) (engine.Stats, error) {
	refused, tree := "", req.MergedTree()
	if fc, err := c.preparedFaces(ctx, req, refs); err != nil || fc != nil {
		if err != nil {
			return engine.Stats{}, fmt.Errorf("cpu engine: %w", err)
		}
		st, err := c.nearestFaces(ctx, req, out, refs, fc, start)
		st.Note = fc.note()
		return st, err
	}
	if req.GridSide == 0 && useFaces(req.Obs.Len(), refs.N) {
		end := req.Trace.Begin("host", "face cells")
		side := index.CellsSideFor(req.Obs.Len(), refs.N, false) // the GPU's balance of build and query
		trees := newLazyTree(refs, tree, req.Trace, req.trees)
		defer trees.release() // after every path below that reads the tree
		fc, why, err := buildFaceCells(ctx, refs, trees, side, req.team, req.faces)
		tree = trees.built()
		end()
		if err != nil {
			return engine.Stats{}, fmt.Errorf("cpu engine: %w", err)
		}
		if fc != nil {
			st, err := c.nearestFaces(ctx, req, out, refs, fc, start)
			st.Note = fc.note()
			req.faces.release(fc)
			return st, err
		}
		refused = "no face cells: " + why + "; "
	}
	st, err := c.nearestPlanned(ctx, req, out, refs, tree, start)
	st.Note = refused + st.Note
	return st, err
}

// nearestPlanned answers a grid query through the index the plan picks:
// the grid, the k-d tree (tree, when one is built already) or brute force.
func (c *CPU) nearestPlanned(ctx context.Context, req request, out engine.Result, refs *index.RefSet, tree *index.KDTree, start time.Time) (engine.Stats, error) {
	// The paths below start goroutines of their own, which a team spinning
	// beside them would keep from the cores: brute force and the
	// observations one by one take a team of their own in run.
	req.team.Close()
	req.team = nil
	end := req.Trace.Begin("host", "plan")
	var plan index.GridPlan
	err := stoppable(ctx, func() { plan = req.Plans().Plan(req.Obs, refs, index.CPUGridCost, req.GridSide, tree) })
	end()
	if err != nil {
		return engine.Stats{}, err
	}
	if plan.Tree != nil {
		var st engine.Stats
		var err error
		if req.Obs.Len() >= cellOrderMin {
			st, err = c.nearestTreeOrdered(ctx, req, out, refs, plan.Tree, start)
		} else {
			st, err = c.nearestEach(ctx, req, out, refs, plan.Tree.Nearest, start)
		}
		st.Note = plan.Note()
		return st, err
	}
	if plan.Index == nil {
		st, err := c.nearestBrute(ctx, req, out, refs, start)
		st.Note = "grid fell back to brute force: " + plan.Reason
		return st, err
	}
	ix := plan.Index
	if req.Obs.Len() >= cellOrderMin {
		st, err := c.nearestGridCells(ctx, req, out, refs, ix, start)
		st.Note = plan.Note()
		return st, err
	}
	st, err := c.nearestEach(ctx, req, out, refs, ix.Nearest, start)
	st.Note = plan.Note()
	return st, err
}

// nearestEach answers the observations one by one through nearest (a grid
// walk or the tree), in batches on every goroutine.
func (c *CPU) nearestEach(ctx context.Context, req request, out engine.Result, refs *index.RefSet,
	nearest func(x, y, z float64, w *index.GridWork) (float64, uint32), start time.Time) (engine.Stats, error) {
	batch := req.BatchSize
	if batch == 0 {
		batch = 4096
	}
	return c.run(ctx, req, batch, start, func() func(lo, hi int) {
		return func(lo, hi int) {
			for i := lo; i < hi; i++ {
				x, y, z := index.Unit(req.Obs.At(i))
				d, k := nearest(x, y, z, nil)
				out.Index[i] = refs.Orig[k]
				out.Distance[i] = float32(index.ChordToAngle(d))
			}
		}
	})
}
