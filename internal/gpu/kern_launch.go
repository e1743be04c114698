package gpu

import (
	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/internal/index"
)

// The launch shapes and arguments more than one kernel file shares: every
// wrapper sizes its grid with blocksFor, and the grid index's queries
// (grid.cu's grid_query, knn.cu's grid_knn and grid_within) all start
// with the same eight arguments, set in one place by gridIndexArgs.set.

// blocksFor is the number of blocks of threads each that covers n items.
func blocksFor(n, threads int) cuda.Dim3 { return cuda.Dim3{X: uint32((n + threads - 1) / threads)} }

// gridIndexArgs are the arguments every query through the grid index
// starts with: the sorted observation records and the reference index.
type gridIndexArgs struct {
	obs                     cuda.DevicePtr
	nobs                    int
	cellStart, sorted, runs cuda.DevicePtr
	shape                   index.GridShape
	ref64                   cuda.DevicePtr
}

// gridIndex is the arguments of a query of nobs sorted records at obs
// through r's grid index of the given shape.
func (r *deviceRefs) gridIndex(obs cuda.DevicePtr, nobs int, shape index.GridShape) gridIndexArgs {
	return gridIndexArgs{obs: obs, nobs: nobs, cellStart: r.cellStart.ptr, sorted: r.sorted.ptr, runs: r.trimmed.ptr,
		shape: shape, ref64: r.ref64.ptr}
}

// set fills the first eight parameters of a grid index query's block.
func (g gridIndexArgs) set(a *cuda.Args) {
	a.SetPtr(0, g.obs)
	a.SetInt32(1, int32(g.nobs))
	a.SetPtr(2, g.cellStart)
	a.SetPtr(3, g.sorted)
	a.SetPtr(4, g.runs)
	a.SetInt32(5, int32(g.shape.G))
	a.SetFloat32(6, g.shape.H)
	a.SetPtr(7, g.ref64)
}
