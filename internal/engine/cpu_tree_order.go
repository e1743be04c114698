package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/geoknn/geoknn/internal/parallel"
)

// A large query through the k-d tree runs in chunks of cellChunk
// observations sorted by a cell of a treeOrderSide^3 grid over the unit
// cube: consecutive observations then descend much the same path, whose
// nodes and leaves stay in the core's caches, where observations in input
// order would fetch a fresh path from memory for each.
const treeOrderSide = 64

// treeOrderKey is the cell of (x, y, z) in the ordering grid.
func treeOrderKey(x, y, z float64) uint32 {
	c := func(v float64) uint32 {
		return uint32(min(max(int((v+1)*treeOrderSide/2), 0), treeOrderSide-1))
	}
	return (c(x)*treeOrderSide+c(y))*treeOrderSide + c(z)
}

// nearestTreeOrdered answers req through t in sorted chunks.
func (c *CPU) nearestTreeOrdered(ctx context.Context, req Request, out Result, refs *refSet, t *kdTree, start time.Time) (Stats, error) {
	n := req.Obs.Len()
	recs, sorted := make([]cellRec, min(n, cellChunk)), make([]cellRec, min(n, cellChunk))
	hist := make([]uint32, treeOrderSide*treeOrderSide*treeOrderSide+1)
	chunks := 0
	for lo := 0; lo < n; lo += cellChunk {
		if err := ctx.Err(); err != nil {
			return Stats{}, fmt.Errorf("cpu engine: %w", err)
		}
		hi := min(lo+cellChunk, n)
		tm := time.Now()
		sortTreeChunk(req.Obs, lo, recs[:hi-lo], sorted[:hi-lo], hist, c.workers)
		req.Trace.Add("host", "sort by cell", tm, time.Since(tm))
		tm = time.Now()
		parallel.Blocks(hi-lo, 1024, c.workers, func(_, a, b int) {
			if ctx.Err() != nil {
				return
			}
			for _, r := range sorted[a:b] {
				d, k := t.nearest(r.x, r.y, r.z, nil)
				i := lo + int(r.pos)
				out.Index[i] = refs.orig[k]
				out.Distance[i] = float32(ChordToAngle(d))
			}
		})
		req.Trace.Add("host", "query", tm, time.Since(tm))
		if req.Progress != nil {
			req.Progress(hi, n)
		}
		chunks++
	}
	if err := ctx.Err(); err != nil {
		return Stats{}, fmt.Errorf("cpu engine: %w", err)
	}
	return c.stats(chunks, start), nil
}

// sortTreeChunk fills recs with observations [lo, lo+len(recs)) and sorts
// them into sorted by treeOrderKey (a counting sort; hist is its scratch).
func sortTreeChunk(obs Points, lo int, recs, sorted []cellRec, hist []uint32, workers int) {
	parallel.Blocks(len(recs), 1<<14, workers, func(_, a, b int) {
		for k := a; k < b; k++ {
			x, y, z := unit(obs.At(lo + k))
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
