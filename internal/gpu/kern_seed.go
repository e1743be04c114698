package gpu

import (
	"fmt"

	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/internal/kernels"
)

// seedKernels wraps seed.cu: the float32 baseline brute-force kernels and
// their launch shapes, for the side-by-side baseline.
type seedKernels struct {
	blockMin, globalMin cuda.Function
	bmArgs, gmArgs      *cuda.Args
}

// The baseline's launch shapes (written for the A100's 108 SMs).
var (
	seedBlockGrid   = cuda.Dim3{X: kernels.SeedWidth, Y: 108}
	seedGlobalGrid  = cuda.Dim3{X: 1, Y: 108 * 20}
	seedThreadBlock = cuda.Dim3{X: 32, Y: 16}
)

func loadSeed(drv *cuda.Driver, mod cuda.Module, suffix string) (seedKernels, error) {
	var k seedKernels
	return k, loadEntries(drv, mod, []entry{
		{"seed_block_min_" + suffix, &k.blockMin, &k.bmArgs}, {"seed_global_min", &k.globalMin, &k.gmArgs},
	})
}

// seedLaunch is one job's worth of arguments for the seed port: nref
// references and nobs observations as radian columns, its blocks' partial
// results (SeedWidth an observation) and the answers.
type seedLaunch struct {
	refLat, refLon      cuda.DevicePtr
	nref                int
	lat, lon            cuda.DevicePtr
	nobs                int
	blockIdx, blockDist cuda.DevicePtr
	outIdx, outDist     cuda.DevicePtr
}

func (k *seedKernels) run(drv *cuda.Driver, stream cuda.Stream, l seedLaunch) error {
	a := k.bmArgs
	a.SetPtr(0, l.refLat)
	a.SetPtr(1, l.refLon)
	a.SetInt32(2, int32(l.nref))
	a.SetPtr(3, l.lat)
	a.SetPtr(4, l.lon)
	a.SetInt32(5, int32(l.nobs))
	a.SetPtr(6, l.blockIdx)
	a.SetPtr(7, l.blockDist)
	if err := drv.Launch(k.blockMin, seedBlockGrid, seedThreadBlock, 0, stream, a); err != nil {
		return fmt.Errorf("seed_block_min: %w", err)
	}
	a = k.gmArgs
	a.SetPtr(0, l.blockDist)
	a.SetPtr(1, l.blockIdx)
	a.SetInt32(2, int32(l.nobs))
	a.SetPtr(3, l.outDist)
	a.SetPtr(4, l.outIdx)
	if err := drv.Launch(k.globalMin, seedGlobalGrid, seedThreadBlock, 0, stream, a); err != nil {
		return fmt.Errorf("seed_global_min: %w", err)
	}
	return nil
}
