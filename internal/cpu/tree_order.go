package cpu

import (
	"context"
	"time"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/parallel"
)

// A large query through the k-d tree runs in chunks of cellChunk
// observations sorted by a cell of a treeOrderSide^3 grid over the unit
// cube: consecutive observations then descend much the same path, whose
// nodes and leaves stay in the core's caches, where observations in input
// order would fetch a fresh path from memory for each; and each starts
// with its predecessor's winner as the bound to prune by, so it skips the
// boxes a blind descent would open before finding one as good. The walk
// reads the packed layout tree.cu walks (nearestPacked).
const treeOrderSide = 64

// treeOrderKey is the cell of (x, y, z) in the ordering grid.
func treeOrderKey(x, y, z float64) uint32 {
	c := func(v float64) uint32 {
		return uint32(min(max(int((v+1)*treeOrderSide/2), 0), treeOrderSide-1))
	}
	return (c(x)*treeOrderSide+c(y))*treeOrderSide + c(z)
}

// nearestTreeOrdered answers req through t in sorted chunks.
func (c *CPU) nearestTreeOrdered(ctx context.Context, req request, out engine.Result, refs *index.RefSet, t *index.KDTree, start time.Time) (engine.Stats, error) {
	n := req.Obs.Len()
	packed, err := index.PackNodes(t)
	if err != nil { // a tree outside the packed layout's bounds: the node-by-node walk
		return c.nearestEach(ctx, req, out, refs, t.Nearest, start)
	}
	leafOf := packed.Leaves(t.ID) // each distinct reference's leaf
	recs, sorted := make([]cellRec, min(n, cellChunk)), make([]cellRec, min(n, cellChunk))
	hist := make([]uint32, treeOrderSide*treeOrderSide*treeOrderSide+1)
	var starts []*index.TreeStart // one a goroutine
	chunks, err := inCellChunks(ctx, req, func(lo, hi int) {
		sortTreeChunk(req.Obs, lo, recs[:hi-lo], sorted[:hi-lo], hist, c.workers)
	}, func(lo, hi int) error {
		for len(starts) < parallel.Workers(hi-lo, 1024, c.workers) {
			starts = append(starts, &index.TreeStart{})
		}
		parallel.Blocks(hi-lo, 1024, c.workers, func(w, a, b int) {
			if ctx.Err() != nil {
				return
			}
			hint, from := uint32(0), starts[w] // a goroutine's start path stays valid: the tree is the query's
			for _, r := range sorted[a:b] {
				d, k := t.NearestPacked(packed, r.x, r.y, r.z, hint, from)
				hint = leafOf[k]
				i := lo + int(r.pos)
				out.Index[i] = refs.Orig[k]
				out.Distance[i] = float32(index.ChordToAngle(d))
			}
		})
		return nil
	})
	if err != nil {
		return engine.Stats{}, err
	}
	return c.stats(chunks, start), nil
}

// sortTreeChunk fills recs with observations [lo, lo+len(recs)) and sorts
// them into sorted by treeOrderKey (a counting sort; hist is its scratch).
func sortTreeChunk(obs index.Points, lo int, recs, sorted []cellRec, hist []uint32, workers int) {
	parallel.Blocks(len(recs), 1<<14, workers, func(_, a, b int) {
		for k := a; k < b; k++ {
			x, y, z := index.Unit(obs.At(lo + k))
			recs[k] = cellRec{x: x, y: y, z: z, cell: treeOrderKey(x, y, z), pos: uint32(k)}
		}
	})
	clear(hist)
	for _, r := range recs {
		hist[r.cell+1]++
	}
	for k := 1; k < len(hist); k++ {
		hist[k] += hist[k-1]
	}
	for _, r := range recs {
		sorted[hist[r.cell]] = r
		hist[r.cell]++
	}
}
