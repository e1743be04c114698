package gpu

import (
	"fmt"

	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/kernels"
)

// validKernels wraps valid.cu: the check, on the device, of observations
// copied in from the staging or straight from the caller's page-locked
// columns (valid.go).
type validKernels struct {
	fn   [2]cuda.Function // [0] float64 columns, [1] float32
	args [2]*cuda.Args
}

func loadValid(drv *cuda.Driver, mod cuda.Module) (*validKernels, error) {
	k := &validKernels{}
	return k, loadEntries(drv, mod, []entry{{"valid_f64", &k.fn[0], &k.args[0]}, {"valid_f32", &k.fn[1], &k.args[1]}})
}

// run checks n points of the device columns lat and lon (float32 with
// is32), replacing each invalid one by (0, 0) and lowering *firstBad (8
// bytes, all ones before) to the lowest invalid index.
func (k *validKernels) run(drv *cuda.Driver, stream cuda.Stream, n int, is32 bool, lat, lon, firstBad cuda.DevicePtr) error {
	if n <= 0 || n > 1<<31-1 {
		return fmt.Errorf("valid: %d points", n)
	}
	latMax, lonMax := index.ValidBounds(is32)
	p := boolInt32(is32)
	a := k.args[p]
	a.SetInt32(0, int32(n))
	a.SetPtr(1, lat)
	a.SetPtr(2, lon)
	if is32 {
		a.SetFloat32(3, float32(latMax))
		a.SetFloat32(4, float32(lonMax))
	} else {
		a.SetFloat64(3, latMax)
		a.SetFloat64(4, lonMax)
	}
	a.SetPtr(5, firstBad)
	threads := kernels.ValidThreads
	if err := drv.Launch(k.fn[p], blocksFor(n, threads), cuda.Dim3{X: uint32(threads)}, 0, stream, a); err != nil {
		return fmt.Errorf("valid: %w", err)
	}
	return nil
}
