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
	for _, f := range []struct {
		name string
		fn   *cuda.Function
	}{{"replace_f64", &k.replace[0]}, {"replace_f32", &k.replace[1]}, {"count_changed", &k.countChanged}, {"map_index", &k.mapIndex}} {
		var err error
		if *f.fn, err = drv.ModuleGetFunction(mod, f.name); err != nil {
			return nil, err
		}
	}
	k.repArgs, k.countArgs, k.mapArgs = cuda.NewArgs(10), cuda.NewArgs(4), cuda.NewArgs(3)
	return k, nil
}

// runReplace writes k new observations (device columns newLat, newLon at
// local indices idx) into the resident columns, their records (recs may be
// 0) and their sorted copies at pos (sorted may be 0), and resets their
// previous answers.
func (r *residentKernels) runReplace(drv *cuda.Driver, stream cuda.Stream, prec int, idx, newLat, newLon cuda.DevicePtr, k int,
	lat, lon, recs, sorted, pos, prev cuda.DevicePtr) error {
	if k <= 0 {
		return nil
	}
	a := r.repArgs
	a.SetPtr(0, idx)
	a.SetPtr(1, newLat)
	a.SetPtr(2, newLon)
	a.SetInt32(3, int32(k))
	a.SetPtr(4, lat)
	a.SetPtr(5, lon)
	a.SetPtr(6, recs)
	a.SetPtr(7, sorted)
	a.SetPtr(8, pos)
	a.SetPtr(9, prev)
	if err := drv.Launch(r.replace[prec], blocksFor(k, 256), cuda.Dim3{X: 256}, 0, stream, a); err != nil {
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
