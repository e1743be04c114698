package engine

import (
	"fmt"

	"github.com/geoknn/geoknn/cuda"
)

// residentKernels wraps resident.cu: replacing resident observations,
// mapping merged-duplicate indices and counting changed answers.
type residentKernels struct {
	replace                     [2]cuda.Function // [0] float64 columns, [1] float32
	countChanged, mapIndex      cuda.Function
	repArgs, countArgs, mapArgs *cuda.Args
}

func loadResident(drv *cuda.Driver, mod cuda.Module) (*residentKernels, error) {
	k := &residentKernels{}
	return k, loadEntries(drv, mod, []entry{
		{"replace_f64", &k.replace[0], &k.repArgs}, {"replace_f32", &k.replace[1], nil},
		{"count_changed", &k.countChanged, &k.countArgs}, {"map_index", &k.mapIndex, &k.mapArgs},
	})
}

// replaceLaunch writes k new observations (device columns newLat, newLon
// at local indices idx) into the resident columns, their records (recs may
// be 0) and their sorted copies at pos (sorted may be 0), and resets their
// previous answers.
type replaceLaunch struct {
	prec                   int
	idx, newLat, newLon    cuda.DevicePtr
	k                      int
	lat, lon, recs, sorted cuda.DevicePtr
	pos, prev              cuda.DevicePtr
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
	if err := drv.Launch(r.replace[l.prec], blocksFor(l.k, 256), cuda.Dim3{X: 256}, 0, stream, a); err != nil {
		return fmt.Errorf("replace: %w", err)
	}
	return nil
}

// runCountChanged adds to *count (a device uint64) the answers in cur that
// differ from prev, then copies cur to prev.
func (r *residentKernels) runCountChanged(drv *cuda.Driver, stream cuda.Stream, cur, prev cuda.DevicePtr, n int, count cuda.DevicePtr) error {
	a := r.countArgs
	a.SetPtr(0, cur)
	a.SetPtr(1, prev)
	a.SetInt32(2, int32(n))
	a.SetPtr(3, count)
	if err := drv.Launch(r.countChanged, blocksFor(n, 256), cuda.Dim3{X: 256}, 0, stream, a); err != nil {
		return fmt.Errorf("count_changed: %w", err)
	}
	return nil
}

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
