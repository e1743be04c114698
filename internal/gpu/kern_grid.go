package gpu

import (
	"fmt"

	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/kernels"
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
	trimArgs, obsKeysArgs                    *cuda.Args
	// The sort straight from radian columns ([0] float64, [1] float32).
	colKeys, colScatter         [2]cuda.Function
	colKeysArgs, colScatterArgs *cuda.Args
	queryThreads                int // grid_query's block size
}

func loadGrid(drv *cuda.Driver, mod cuda.Module) (*gridKernels, error) {
	k := &gridKernels{}
	err := loadEntries(drv, mod, []entry{
		{"grid_obs_prep_f64", &k.prep[0], &k.prepArgs}, {"grid_obs_prep_f32", &k.prep[1], nil},
		{"grid_obs_keys", &k.obsKeys, &k.obsKeysArgs}, {"grid_ref_keys", &k.refKeys, &k.keysArgs},
		{"grid_scan_blocks", &k.scanBlocks, &k.scanArgs}, {"grid_scan_sums", &k.scanSums, &k.sumsArgs},
		{"grid_scan_add", &k.scanAdd, &k.addArgs}, {"grid_obs_scatter", &k.obsScatter, &k.obsScatArgs},
		{"grid_ref_scatter", &k.refScatter, &k.refScatArgs}, {"grid_query", &k.query, &k.qArgs},
		{"grid_runs_trim", &k.trim, &k.trimArgs},
		{"grid_obs_keys_cols_f64", &k.colKeys[0], &k.colKeysArgs}, {"grid_obs_keys_cols_f32", &k.colKeys[1], nil},
		{"grid_obs_scatter_cols_f64", &k.colScatter[0], &k.colScatterArgs},
		{"grid_obs_scatter_cols_f32", &k.colScatter[1], nil},
	})
	if err != nil {
		return nil, err
	}
	// grid_query stages its block's records in shared memory sized by its
	// compiled block (GQ_THREADS, its launch bound): launch exactly that.
	threads, err := drv.FuncGetAttribute(k.query, cuda.FuncMaxThreadsPerBlock)
	if err != nil {
		return nil, err
	}
	k.queryThreads = threads
	return k, nil
}

// sortBufs is the scratch of one counting sort: a (key, rank) pair an item
// (sortKeyBytes), the histogram that becomes the keys' starts and the
// scan's chunk totals (for the index, of gridShape's sizes; for
// observations, of histLen keys: sortHistLen).
type sortBufs struct {
	keys, hist, sums cuda.DevicePtr
	histLen          int // the observation sort's histogram length (0: the index's)
}

// sortKeyBytes is the size of one sort key: a uint2 (cell, rank in cell).
const sortKeyBytes = 8

// scan turns hist's n counts into exclusive starts.
func (k *gridKernels) scan(drv *cuda.Driver, stream cuda.Stream, n int, b sortBufs) error {
	nb := index.ScanSums(n)
	if n > index.MaxScan {
		return fmt.Errorf("grid kernels: %d keys exceed the scan's %d", n, index.MaxScan)
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

// indexBuild is one build of the reference index: nref float4 unit vectors
// (xyzw) sorted by cell into sorted; scratch.hist becomes the index's cell
// starts, and runs (the sphere's z-runs a column) are trimmed to the cells
// that hold references into trimmed.
type indexBuild struct {
	shape                 index.GridShape
	xyzw                  cuda.DevicePtr
	nref                  int
	scratch               sortBufs
	sorted, runs, trimmed cuda.DevicePtr
}

func (k *gridKernels) buildIndex(drv *cuda.Driver, stream cuda.Stream, b indexBuild) error {
	if b.nref <= 0 || b.shape.G <= 0 {
		return fmt.Errorf("grid index: bad shape (%d references, grid %d)", b.nref, b.shape.G)
	}
	if err := drv.MemsetD32Async(b.scratch.hist, 0, uint64(b.shape.Cells()), stream); err != nil {
		return err
	}
	a := k.keysArgs
	a.SetPtr(0, b.xyzw)
	a.SetInt32(1, int32(b.nref))
	a.SetInt32(2, int32(b.shape.G))
	a.SetFloat32(3, b.shape.H)
	a.SetPtr(4, b.scratch.keys)
	a.SetPtr(5, b.scratch.hist)
	if err := drv.Launch(k.refKeys, blocksFor(b.nref, 256), cuda.Dim3{X: 256}, 0, stream, a); err != nil {
		return fmt.Errorf("grid_ref_keys: %w", err)
	}
	if err := k.scan(drv, stream, b.shape.Cells(), b.scratch); err != nil {
		return err
	}
	if err := k.trimRuns(drv, stream, b); err != nil {
		return err
	}
	a = k.refScatArgs
	a.SetPtr(0, b.xyzw)
	a.SetPtr(1, b.scratch.keys)
	a.SetInt32(2, int32(b.nref))
	a.SetPtr(3, b.scratch.hist)
	a.SetPtr(4, b.sorted)
	if err := drv.Launch(k.refScatter, blocksFor(b.nref, 256), cuda.Dim3{X: 256}, 0, stream, a); err != nil {
		return fmt.Errorf("grid_ref_scatter: %w", err)
	}
	return nil
}

func (k *gridKernels) trimRuns(drv *cuda.Driver, stream cuda.Stream, b indexBuild) error {
	a := k.trimArgs
	a.SetPtr(0, b.runs)
	a.SetPtr(1, b.scratch.hist)
	a.SetInt32(2, int32(b.shape.G))
	a.SetPtr(3, b.trimmed)
	if err := drv.Launch(k.trim, blocksFor(b.shape.G*b.shape.G, 256), cuda.Dim3{X: 256}, 0, stream, a); err != nil {
		return fmt.Errorf("grid_runs_trim: %w", err)
	}
	return nil
}

// obsPrep is one grid_obs_prep launch: the unit-vector records of n
// observations (indices 0, 1, ...) from their radian columns into recs.
type obsPrep struct {
	prec     int // 0: float64 columns, 1: float32
	lat, lon cuda.DevicePtr
	n        int
	recs     cuda.DevicePtr
}

func (k *gridKernels) prepObs(drv *cuda.Driver, stream cuda.Stream, p obsPrep) error {
	a := k.prepArgs
	a.SetPtr(0, p.lat)
	a.SetPtr(1, p.lon)
	a.SetInt32(2, int32(p.n))
	a.SetPtr(3, p.recs)
	if err := drv.Launch(k.prep[p.prec], blocksFor(p.n, kernels.GridPrepThreads), cuda.Dim3{X: kernels.GridPrepThreads}, 0, stream, a); err != nil {
		return fmt.Errorf("grid_obs_prep: %w", err)
	}
	return nil
}

// obsSort is one counting sort of n observations by cell: from their
// radian columns (lat, lon set: each record made as it is moved) or from
// the records already in recs (lat == 0), into sorted; pos (if not 0, only
// from records) receives each record's position in sorted.
type obsSort struct {
	prec        int
	lat, lon    cuda.DevicePtr
	n           int
	span        int // the records' indices lie in [0, span) (0: n): the bands are of span
	shape       index.GridShape
	recs        cuda.DevicePtr
	scratch     sortBufs
	sorted, pos cuda.DevicePtr
}

func (k *gridKernels) sortObs(drv *cuda.Driver, stream cuda.Stream, o obsSort) error {
	if o.n <= 0 || o.shape.G <= 0 {
		return fmt.Errorf("grid sort: bad shape (%d observations, grid %d)", o.n, o.shape.G)
	}
	bands := index.BandsFor(max(o.n, o.span), o.shape)
	if bands.Keys > o.scratch.histLen {
		return fmt.Errorf("grid sort: %d keys, the histogram holds %d", bands.Keys, o.scratch.histLen)
	}
	if err := drv.MemsetD32Async(o.scratch.hist, 0, uint64(bands.Keys), stream); err != nil {
		return err
	}
	if err := k.obsSortKeys(drv, stream, o, bands); err != nil {
		return err
	}
	if err := k.scan(drv, stream, bands.Keys, o.scratch); err != nil {
		return err
	}
	if o.lat != 0 {
		return k.scatterCols(drv, stream, o)
	}
	a := k.obsScatArgs
	a.SetPtr(0, o.recs)
	a.SetPtr(1, o.scratch.keys)
	a.SetInt32(2, int32(o.n))
	a.SetPtr(3, o.scratch.hist)
	a.SetPtr(4, o.sorted)
	a.SetPtr(5, o.pos)
	if err := drv.Launch(k.obsScatter, blocksFor(o.n, kernels.GridPrepThreads), cuda.Dim3{X: kernels.GridPrepThreads}, 0, stream, a); err != nil {
		return fmt.Errorf("grid_obs_scatter: %w", err)
	}
	return nil
}

// obsSortKeys counts the observations' cells and writes their keys, from
// the columns or from the records.
func (k *gridKernels) obsSortKeys(drv *cuda.Driver, stream cuda.Stream, o obsSort, bands index.ObsBands) error {
	if o.lat != 0 {
		a := k.colKeysArgs
		a.SetPtr(0, o.lat)
		a.SetPtr(1, o.lon)
		a.SetInt32(2, int32(o.n))
		a.SetInt32(3, int32(o.shape.G))
		a.SetFloat32(4, o.shape.H)
		a.SetInt32(5, int32(bands.Shift))
		a.SetPtr(6, o.scratch.keys)
		a.SetPtr(7, o.scratch.hist)
		if err := drv.Launch(k.colKeys[o.prec], blocksFor(o.n, kernels.GridPrepThreads), cuda.Dim3{X: kernels.GridPrepThreads}, 0, stream, a); err != nil {
			return fmt.Errorf("grid_obs_keys_cols: %w", err)
		}
		return nil
	}
	a := k.obsKeysArgs
	a.SetPtr(0, o.recs)
	a.SetInt32(1, int32(o.n))
	a.SetInt32(2, int32(o.shape.G))
	a.SetFloat32(3, o.shape.H)
	a.SetInt32(4, int32(bands.Shift))
	a.SetPtr(5, o.scratch.keys)
	a.SetPtr(6, o.scratch.hist)
	if err := drv.Launch(k.obsKeys, blocksFor(o.n, kernels.GridPrepThreads), cuda.Dim3{X: kernels.GridPrepThreads}, 0, stream, a); err != nil {
		return fmt.Errorf("grid_obs_keys: %w", err)
	}
	return nil
}

// gridQuery is one query launch: sorted observation records against an
// index; answers go to outIdx/outDist at each record's index, and the
// number of near ties the query re-ranked in fp64 is added to *refined.
type gridQuery struct {
	gridIndexArgs
	outIdx, outDist cuda.DevicePtr
	refined         cuda.DevicePtr
}

func (k *gridKernels) runQuery(drv *cuda.Driver, stream cuda.Stream, q gridQuery) error {
	if q.nobs <= 0 || q.shape.G <= 0 {
		return fmt.Errorf("grid query: bad shape (%d observations, grid %d)", q.nobs, q.shape.G)
	}
	a := k.qArgs
	q.set(a)
	a.SetPtr(8, q.outIdx)
	a.SetPtr(9, q.outDist)
	a.SetPtr(10, q.refined)
	if err := drv.Launch(k.query, blocksFor(q.nobs, k.queryThreads), cuda.Dim3{X: uint32(k.queryThreads)}, 0, stream, a); err != nil {
		return fmt.Errorf("grid_query: %w", err)
	}
	return nil
}

// scatterCols moves observations to their sorted places straight from
// their radian columns, making each one's record on the way.
func (k *gridKernels) scatterCols(drv *cuda.Driver, stream cuda.Stream, o obsSort) error {
	if o.pos != 0 {
		return fmt.Errorf("grid sort: positions are kept only when sorting records")
	}
	a := k.colScatterArgs
	a.SetPtr(0, o.lat)
	a.SetPtr(1, o.lon)
	a.SetPtr(2, o.scratch.keys)
	a.SetInt32(3, int32(o.n))
	a.SetPtr(4, o.scratch.hist)
	a.SetPtr(5, o.sorted)
	if err := drv.Launch(k.colScatter[o.prec], blocksFor(o.n, kernels.GridPrepThreads), cuda.Dim3{X: kernels.GridPrepThreads}, 0, stream, a); err != nil {
		return fmt.Errorf("grid_obs_scatter_cols: %w", err)
	}
	return nil
}
