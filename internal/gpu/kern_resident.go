package gpu

import (
	"fmt"

	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/kernels"
	"github.com/geoknn/geoknn/sphere"
)

// residentKernels wraps resident.cu: replacing resident observations,
// mapping merged-duplicate indices and counting changed answers.
type residentKernels struct {
	replace, draw, gather                             [2]cuda.Function // [0] float64 columns, [1] float32
	countChanged, mapIndex, gatherPatched             cuda.Function
	repArgs, drawArgs, gatherArgs, countArgs, mapArgs *cuda.Args
	patchedArgs                                       *cuda.Args
}

func loadResident(drv *cuda.Driver, mod cuda.Module) (*residentKernels, error) {
	k := &residentKernels{}
	return k, loadEntries(drv, mod, []entry{
		{"replace_f64", &k.replace[0], &k.repArgs}, {"replace_f32", &k.replace[1], nil},
		{"draw_replace_f64", &k.draw[0], &k.drawArgs}, {"draw_replace_f32", &k.draw[1], nil},
		{"gather_f64", &k.gather[0], &k.gatherArgs}, {"gather_f32", &k.gather[1], nil},
		{"count_changed", &k.countChanged, &k.countArgs}, {"map_index", &k.mapIndex, &k.mapArgs},
		{"gather_patched", &k.gatherPatched, &k.patchedArgs},
	})
}

// patchList is where replacements list the places in the sorted records
// they patched: count (a device uint32) entries of list, at most capacity
// kept (resident.cu's PatchList; all zero when nothing is sorted).
type patchList struct {
	list, count cuda.DevicePtr
	capacity    int
}

// setArgs puts the list in a launch's arguments from i on.
func (l patchList) setArgs(a *cuda.Args, i int) {
	a.SetPtr(i, l.list)
	a.SetPtr(i+1, l.count)
	a.SetInt32(i+2, int32(l.capacity))
}

// runGatherPatched copies the n patched records that list names out of
// sorted into out, unmarked.
func (r *residentKernels) runGatherPatched(drv *cuda.Driver, stream cuda.Stream, sorted cuda.DevicePtr, list cuda.DevicePtr, n int, out cuda.DevicePtr) error {
	a := r.patchedArgs
	a.SetPtr(0, sorted)
	a.SetPtr(1, list)
	a.SetInt32(2, int32(n))
	a.SetPtr(3, out)
	if err := drv.Launch(r.gatherPatched, blocksFor(n, 256), cuda.Dim3{X: 256}, 0, stream, a); err != nil {
		return fmt.Errorf("gather_patched: %w", err)
	}
	return nil
}

// replaceLaunch writes k new observations (device columns newLat, newLon
// at local indices idx) into the resident columns, their records (recs may
// be 0) and their sorted copies at pos (sorted may be 0; the places go to
// patched), and resets their previous answers.
type replaceLaunch struct {
	prec                   int
	idx, newLat, newLon    cuda.DevicePtr
	k                      int
	lat, lon, recs, sorted cuda.DevicePtr
	pos, prev              cuda.DevicePtr
	patched                patchList
}

func (r *residentKernels) runReplace(drv *cuda.Driver, stream cuda.Stream, l replaceLaunch) error {
	if l.k <= 0 {
		return nil
	}
	a := r.repArgs
	for i, p := range []cuda.DevicePtr{l.idx, l.newLat, l.newLon} {
		a.SetPtr(i, p)
	}
	a.SetInt32(3, int32(l.k))
	for i, p := range []cuda.DevicePtr{l.lat, l.lon, l.recs, l.sorted, l.pos, l.prev} {
		a.SetPtr(4+i, p)
	}
	l.patched.setArgs(a, 10)
	if err := drv.Launch(r.replace[l.prec], blocksFor(l.k, 256), cuda.Dim3{X: 256}, 0, stream, a); err != nil {
		return fmt.Errorf("replace: %w", err)
	}
	return nil
}

// drawLaunch applies the replacement rep of n observations to those in
// [lo, hi), whose columns (lat, lon), records (recs, may be 0) and sorted
// copies at pos (sorted may be 0; the places go to patched) start at index
// lo, and resets their previous answers (prev).
type drawLaunch struct {
	prec                   int
	rep                    sphere.Replacement
	gen                    index.GenKind
	n, lo, hi              int
	lat, lon, recs, sorted cuda.DevicePtr
	pos, prev              cuda.DevicePtr
	patched                patchList
}

func (r *residentKernels) runDraw(drv *cuda.Driver, stream cuda.Stream, l drawLaunch) error {
	if l.lo >= l.hi || l.rep.Fraction == 0 {
		return nil
	}
	first, last := l.lo/kernels.ReplaceBlock, (l.hi-1)/kernels.ReplaceBlock
	a := r.drawArgs
	a.SetInt32(0, int32(l.n))
	a.SetInt32(1, int32(l.lo))
	a.SetInt32(2, int32(l.hi))
	a.SetFloat64(3, l.rep.Fraction)
	a.SetUint64(4, l.rep.SlotKey())
	a.SetUint64(5, l.rep.PointSeed())
	a.SetInt32(6, int32(l.gen))
	a.SetInt32(7, int32(first))
	for i, p := range []cuda.DevicePtr{l.lat, l.lon, l.recs, l.sorted, l.pos, l.prev} {
		a.SetPtr(8+i, p)
	}
	l.patched.setArgs(a, 14)
	grid := cuda.Dim3{X: uint32(last - first + 1)}
	if err := drv.Launch(r.draw[l.prec], grid, cuda.Dim3{X: kernels.DrawThreads}, 0, stream, a); err != nil {
		return fmt.Errorf("draw_replace: %w", err)
	}
	return nil
}

// runGather writes lat[idx[j]], lon[idx[j]] as float64 pairs to out, j < k.
func (r *residentKernels) runGather(drv *cuda.Driver, stream cuda.Stream, prec int, idx cuda.DevicePtr, k int, lat, lon, out cuda.DevicePtr) error {
	if k <= 0 {
		return nil
	}
	a := r.gatherArgs
	a.SetPtr(0, idx)
	a.SetInt32(1, int32(k))
	a.SetPtr(2, lat)
	a.SetPtr(3, lon)
	a.SetPtr(4, out)
	if err := drv.Launch(r.gather[prec], blocksFor(k, 256), cuda.Dim3{X: 256}, 0, stream, a); err != nil {
		return fmt.Errorf("gather: %w", err)
	}
	return nil
}

// runCountChanged adds to *count (a device uint64) the answers in cur that
// differ from prev (the caller then takes cur as the previous answers);
// nothing where the face cells' status words at cellsStatus (0: none) say
// the query answered nothing.
// The kernel reads four answers a load, so cur and prev must be 16-byte
// aligned (as allocations are); its blocks stride over the columns, at
// most countBlocksPerSM a multiprocessor of the sms.
func (r *residentKernels) runCountChanged(drv *cuda.Driver, stream cuda.Stream, cur, prev cuda.DevicePtr, n int, count, cellsStatus cuda.DevicePtr, sms int) error {
	if cur%16 != 0 || prev%16 != 0 || n < 0 || sms <= 0 {
		return fmt.Errorf("count_changed: bad launch (columns at %#x and %#x, %d answers, %d SMs)", cur, prev, n, sms)
	}
	// The kernel's last n % 4 answers take a grid-wide 32-bit index and
	// stride: the grid is cut so that n plus the stride stays within 2^31
	// (sessions hold at most maxPartLen a GPU, leaving 4,096 blocks).
	most := (1<<31 - n) / kernels.CountThreads
	if most < 1 {
		return fmt.Errorf("count_changed: %d answers pass a 32-bit index with any grid", n)
	}
	blocks := blocksFor((n+3)/4, kernels.CountThreads)
	blocks.X = max(1, min(blocks.X, uint32(min(countBlocksPerSM*sms, most))))
	a := r.countArgs
	a.SetPtr(0, cur)
	a.SetPtr(1, prev)
	a.SetInt32(2, int32(n))
	a.SetPtr(3, count)
	a.SetPtr(4, cellsStatus)
	if err := drv.Launch(r.countChanged, blocks, cuda.Dim3{X: kernels.CountThreads}, 0, stream, a); err != nil {
		return fmt.Errorf("count_changed: %w", err)
	}
	return nil
}

// countBlocksPerSM fills a multiprocessor with count_changed's blocks of
// 256 threads (2,048 threads an SM on the GPUs since Volta).
const countBlocksPerSM = 8

func (r *residentKernels) runMapIndex(drv *cuda.Driver, stream cuda.Stream, idx cuda.DevicePtr, n int, orig cuda.DevicePtr) error {
	a := r.mapArgs
	a.SetPtr(0, idx)
	a.SetInt32(1, int32(n))
	a.SetPtr(2, orig)
	if err := drv.Launch(r.mapIndex, blocksFor(n, 256), cuda.Dim3{X: 256}, 0, stream, a); err != nil {
		return fmt.Errorf("map_index: %w", err)
	}
	return nil
}
