package engine

import (
	"fmt"

	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/kernels"
)

// gridKernels wraps grid.cu: one counting sort (keys and histogram, a
// three-kernel scan, scatter) that builds the reference index and orders the
// observations by cell, and the query. Argument arrays are made once.
type gridKernels struct {
	prep                                     [2]cuda.Function // [0] float64 input, [1] float32
	obsKeys, refKeys                         cuda.Function
	scanBlocks, scanSums, scanAdd            cuda.Function
	obsScatter, refScatter, query, trim      cuda.Function
	prepArgs, keysArgs, scanArgs, sumsArgs   *cuda.Args
	addArgs, refScatArgs, obsScatArgs, qArgs *cuda.Args
	trimArgs                                 *cuda.Args
	queryThreads                             int // grid_query's block size
}

func loadGrid(drv *cuda.Driver, mod cuda.Module) (*gridKernels, error) {
	k := &gridKernels{}
	for _, f := range []struct {
		name string
		fn   *cuda.Function
	}{
		{"grid_obs_prep_f64", &k.prep[0]}, {"grid_obs_prep_f32", &k.prep[1]},
		{"grid_obs_keys", &k.obsKeys}, {"grid_ref_keys", &k.refKeys},
		{"grid_scan_blocks", &k.scanBlocks}, {"grid_scan_sums", &k.scanSums}, {"grid_scan_add", &k.scanAdd},
		{"grid_obs_scatter", &k.obsScatter}, {"grid_ref_scatter", &k.refScatter}, {"grid_query", &k.query},
		{"grid_runs_trim", &k.trim},
	} {
		var err error
		if *f.fn, err = drv.ModuleGetFunction(mod, f.name); err != nil {
			return nil, err
		}
	}
	k.prepArgs, k.keysArgs = cuda.NewArgs(9), cuda.NewArgs(6)
	k.scanArgs, k.sumsArgs, k.addArgs = cuda.NewArgs(3), cuda.NewArgs(2), cuda.NewArgs(3)
	k.refScatArgs, k.obsScatArgs, k.qArgs = cuda.NewArgs(5), cuda.NewArgs(6), cuda.NewArgs(11)
	k.trimArgs = cuda.NewArgs(4)
	// grid_query stages its block's records in shared memory sized by its
	// compiled block (GQ_THREADS, its launch bound): launch exactly that.
	threads, err := drv.FuncGetAttribute(k.query, cuda.FuncMaxThreadsPerBlock)
	if err != nil {
		return nil, err
	}
	k.queryThreads = threads
	return k, nil
}

// gridShape is the cell grid of one query: g cells an axis of side h (the
// float32 value every kernel uses, so that all agree on cell bounds).
type gridShape struct {
	g int
	h float32
}

func newGridShape(g int) gridShape { return gridShape{g: g, h: 2 / float32(g)} }

// cells is the histogram length: one count a cell and the end sentinel.
func (s gridShape) cells() int { return s.g*s.g*s.g + 1 }

// scanSums is the length of the scan's per-chunk totals.
func (s gridShape) scanSums() int {
	return (s.cells() + kernels.GridScanChunk - 1) / kernels.GridScanChunk
}

// sortBufs is the scratch of one counting sort: a (cell, rank) key an item
// (sortKeyBytes), the histogram that becomes the cell starts and the scan's
// chunk totals (of gridShape's sizes).
type sortBufs struct {
	keys, hist, sums cuda.DevicePtr
}

// sortKeyBytes is the size of one sort key: a uint2 (cell, rank in cell).
const sortKeyBytes = 8

func blocksFor(n, threads int) cuda.Dim3 { return cuda.Dim3{X: uint32((n + threads - 1) / threads)} }

// scan turns hist into exclusive cell starts.
func (k *gridKernels) scan(drv *cuda.Driver, stream cuda.Stream, shape gridShape, b sortBufs) error {
	n, nb := shape.cells(), shape.scanSums()
	if nb > kernels.GridScanChunk {
		return fmt.Errorf("grid kernels: %d cells exceed the scan's %d", n, kernels.GridScanChunk*kernels.GridScanChunk)
	}
	a := k.scanArgs
	a.SetPtr(0, b.hist)
	a.SetUint64(1, uint64(n))
	a.SetPtr(2, b.sums)
	if err := drv.Launch(k.scanBlocks, cuda.Dim3{X: uint32(nb)}, cuda.Dim3{X: kernels.GridScanThreads}, 0, stream, a); err != nil {
		return fmt.Errorf("grid_scan_blocks: %w", err)
	}
	a = k.sumsArgs
	a.SetPtr(0, b.sums)
	a.SetInt32(1, int32(nb))
	if err := drv.Launch(k.scanSums, cuda.Dim3{X: 1}, cuda.Dim3{X: kernels.GridScanThreads}, 0, stream, a); err != nil {
		return fmt.Errorf("grid_scan_sums: %w", err)
	}
	a = k.addArgs
	a.SetPtr(0, b.hist)
	a.SetUint64(1, uint64(n))
	a.SetPtr(2, b.sums)
	if err := drv.Launch(k.scanAdd, blocksFor(min(n, 1<<22), 256), cuda.Dim3{X: 256}, 0, stream, a); err != nil {
		return fmt.Errorf("grid_scan_add: %w", err)
	}
	return nil
}

// buildIndex sorts nref float4 unit vectors (xyzw) by cell into sorted;
// b.hist becomes the index's cell starts, and runs (the sphere's z-runs a
// column) are trimmed to the cells that hold references into trimmed.
func (k *gridKernels) buildIndex(drv *cuda.Driver, stream cuda.Stream, shape gridShape, xyzw cuda.DevicePtr, nref int,
	b sortBufs, sorted, runs, trimmed cuda.DevicePtr) error {
	if nref <= 0 || shape.g <= 0 {
		return fmt.Errorf("grid index: bad shape (%d references, grid %d)", nref, shape.g)
	}
	if err := drv.MemsetD32Async(b.hist, 0, uint64(shape.cells()), stream); err != nil {
		return err
	}
	if err := k.launchKeys(drv, stream, k.refKeys, xyzw, nref, shape, b, 256, "grid_ref_keys"); err != nil {
		return err
	}
	if err := k.scan(drv, stream, shape, b); err != nil {
		return err
	}
	a := k.trimArgs
	a.SetPtr(0, runs)
	a.SetPtr(1, b.hist)
	a.SetInt32(2, int32(shape.g))
	a.SetPtr(3, trimmed)
	if err := drv.Launch(k.trim, blocksFor(shape.g*shape.g, 256), cuda.Dim3{X: 256}, 0, stream, a); err != nil {
		return fmt.Errorf("grid_runs_trim: %w", err)
	}
	a = k.refScatArgs
	a.SetPtr(0, xyzw)
	a.SetPtr(1, b.keys)
	a.SetInt32(2, int32(nref))
	a.SetPtr(3, b.hist)
	a.SetPtr(4, sorted)
	if err := drv.Launch(k.refScatter, blocksFor(nref, 256), cuda.Dim3{X: 256}, 0, stream, a); err != nil {
		return fmt.Errorf("grid_ref_scatter: %w", err)
	}
	return nil
}

// prepObs writes the unit-vector records of n observations (indices first,
// first+1, ...) into recs; with sort set it also counts their cells into
// b.hist, which must be zeroed before, and b.keys.
func (k *gridKernels) prepObs(drv *cuda.Driver, stream cuda.Stream, prec int, lat, lon cuda.DevicePtr, n int, first uint32,
	shape gridShape, sort bool, recs cuda.DevicePtr, b sortBufs) error {
	a := k.prepArgs
	a.SetPtr(0, lat)
	a.SetPtr(1, lon)
	a.SetInt32(2, int32(n))
	a.SetUint32(3, first)
	g := 0
	if sort {
		g = shape.g
	}
	a.SetInt32(4, int32(g))
	a.SetFloat32(5, shape.h)
	a.SetPtr(6, recs)
	a.SetPtr(7, b.keys)
	a.SetPtr(8, b.hist)
	if err := drv.Launch(k.prep[prec], blocksFor(n, kernels.GridPrepThreads), cuda.Dim3{X: kernels.GridPrepThreads}, 0, stream, a); err != nil {
		return fmt.Errorf("grid_obs_prep: %w", err)
	}
	return nil
}

// sortObs orders n observations by cell: from their radian columns (lat,
// lon set: records written to recs first) or from records already in recs
// (lat == 0), into sorted; pos (if not 0) receives each record's position.
func (k *gridKernels) sortObs(drv *cuda.Driver, stream cuda.Stream, prec int, lat, lon cuda.DevicePtr, n int,
	shape gridShape, recs cuda.DevicePtr, b sortBufs, sorted, pos cuda.DevicePtr) error {
	if n <= 0 || shape.g <= 0 {
		return fmt.Errorf("grid sort: bad shape (%d observations, grid %d)", n, shape.g)
	}
	if err := drv.MemsetD32Async(b.hist, 0, uint64(shape.cells()), stream); err != nil {
		return err
	}
	if lat != 0 {
		if err := k.prepObs(drv, stream, prec, lat, lon, n, 0, shape, true, recs, b); err != nil {
			return err
		}
	} else {
		if err := k.launchKeys(drv, stream, k.obsKeys, recs, n, shape, b, kernels.GridPrepThreads, "grid_obs_keys"); err != nil {
			return err
		}
	}
	if err := k.scan(drv, stream, shape, b); err != nil {
		return err
	}
	a := k.obsScatArgs
	a.SetPtr(0, recs)
	a.SetPtr(1, b.keys)
	a.SetInt32(2, int32(n))
	a.SetPtr(3, b.hist)
	a.SetPtr(4, sorted)
	a.SetPtr(5, pos)
	if err := drv.Launch(k.obsScatter, blocksFor(n, kernels.GridPrepThreads), cuda.Dim3{X: kernels.GridPrepThreads}, 0, stream, a); err != nil {
		return fmt.Errorf("grid_obs_scatter: %w", err)
	}
	return nil
}

// gridQuery is one query launch: sorted observation records against an
// index; answers go to outIdx/outDist at each record's index, and the
// number of near ties the query re-ranked in fp64 is added to *refined.
type gridQuery struct {
	obs                     cuda.DevicePtr
	nobs                    int
	cellStart, sorted, runs cuda.DevicePtr
	shape                   gridShape
	ref64                   cuda.DevicePtr
	outIdx, outDist         cuda.DevicePtr
	refined                 cuda.DevicePtr
}

func (k *gridKernels) runQuery(drv *cuda.Driver, stream cuda.Stream, q gridQuery) error {
	if q.nobs <= 0 || q.shape.g <= 0 {
		return fmt.Errorf("grid query: bad shape (%d observations, grid %d)", q.nobs, q.shape.g)
	}
	a := k.qArgs
	a.SetPtr(0, q.obs)
	a.SetInt32(1, int32(q.nobs))
	a.SetPtr(2, q.cellStart)
	a.SetPtr(3, q.sorted)
	a.SetPtr(4, q.runs)
	a.SetInt32(5, int32(q.shape.g))
	a.SetFloat32(6, q.shape.h)
	a.SetPtr(7, q.ref64)
	a.SetPtr(8, q.outIdx)
	a.SetPtr(9, q.outDist)
	a.SetPtr(10, q.refined)
	if err := drv.Launch(k.query, blocksFor(q.nobs, k.queryThreads), cuda.Dim3{X: uint32(k.queryThreads)}, 0, stream, a); err != nil {
		return fmt.Errorf("grid_query: %w", err)
	}
	return nil
}

// launchKeys runs a key pass (grid_ref_keys or grid_obs_keys): n items of in
// get their (cell, rank) keys in b.keys, counted into b.hist.
func (k *gridKernels) launchKeys(drv *cuda.Driver, stream cuda.Stream, fn cuda.Function, in cuda.DevicePtr, n int,
	shape gridShape, b sortBufs, threads int, name string) error {
	a := k.keysArgs
	a.SetPtr(0, in)
	a.SetInt32(1, int32(n))
	a.SetInt32(2, int32(shape.g))
	a.SetFloat32(3, shape.h)
	a.SetPtr(4, b.keys)
	a.SetPtr(5, b.hist)
	if err := drv.Launch(fn, blocksFor(n, threads), cuda.Dim3{X: uint32(threads)}, 0, stream, a); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
