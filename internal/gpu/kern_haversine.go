package gpu

import (
	"fmt"

	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/internal/kernels"
)

// bruteKernels wraps haversine.cu's kernels for one input precision; the
// argument arrays are made once and refilled per launch.
type bruteKernels struct {
	blockMin, globalMin, refine cuda.Function
	bmArgs, gmArgs, rfArgs      *cuda.Args
}

func loadBrute(drv *cuda.Driver, mod cuda.Module, suffix string) (bruteKernels, error) {
	var k bruteKernels
	return k, loadEntries(drv, mod, []entry{
		{"block_min_" + suffix, &k.blockMin, &k.bmArgs}, {"global_min_" + suffix, &k.globalMin, &k.gmArgs},
		{"refine_" + suffix, &k.refine, &k.rfArgs},
	})
}

// bruteLaunch is one job's worth of arguments for the brute-force kernels.
type bruteLaunch struct {
	lat, lon                cuda.DevicePtr
	nobs                    int
	ref32, ref64            cuda.DevicePtr
	nref                    int
	slices, sliceLen        int
	partD1, partD2, partIdx cuda.DevicePtr
	outIdx, outDist         cuda.DevicePtr
	flagged, nflagged       cuda.DevicePtr
	refineBlocks            int
}

// run enqueues block_min, global_min and refine on stream. nflagged must be
// zeroed on the stream before.
func (k *bruteKernels) run(drv *cuda.Driver, stream cuda.Stream, l bruteLaunch) error {
	perBlock := kernels.BlockMinThreads * kernels.BlockMinObs
	if l.nobs <= 0 || l.nref <= 0 || l.sliceLen%kernels.BlockMinTile != 0 || l.slices*l.sliceLen < l.nref || l.slices > 65535 {
		return fmt.Errorf("brute kernels: bad launch shape (%d obs, %d refs, %d slices of %d)", l.nobs, l.nref, l.slices, l.sliceLen)
	}
	a := k.bmArgs
	a.SetPtr(0, l.lat)
	a.SetPtr(1, l.lon)
	a.SetInt32(2, int32(l.nobs))
	a.SetPtr(3, l.ref32)
	a.SetInt32(4, int32(l.nref))
	a.SetInt32(5, int32(l.sliceLen))
	a.SetPtr(6, l.partD1)
	a.SetPtr(7, l.partD2)
	a.SetPtr(8, l.partIdx)
	grid := cuda.Dim3{X: uint32((l.nobs + perBlock - 1) / perBlock), Y: uint32(l.slices)}
	if err := drv.Launch(k.blockMin, grid, cuda.Dim3{X: kernels.BlockMinThreads}, 0, stream, a); err != nil {
		return fmt.Errorf("block_min: %w", err)
	}
	a = k.gmArgs
	a.SetPtr(0, l.lat)
	a.SetPtr(1, l.lon)
	a.SetInt32(2, int32(l.nobs))
	a.SetPtr(3, l.ref64)
	a.SetInt32(4, int32(l.slices))
	a.SetPtr(5, l.partD1)
	a.SetPtr(6, l.partD2)
	a.SetPtr(7, l.partIdx)
	a.SetPtr(8, l.outIdx)
	a.SetPtr(9, l.outDist)
	a.SetPtr(10, l.flagged)
	a.SetPtr(11, l.nflagged)
	if err := drv.Launch(k.globalMin, cuda.Dim3{X: uint32((l.nobs + 255) / 256)}, cuda.Dim3{X: 256}, 0, stream, a); err != nil {
		return fmt.Errorf("global_min: %w", err)
	}
	return k.launchRefine(drv, stream, l)
}

// launchRefine enqueues the fp64 re-ranking of whatever observations an
// earlier kernel on the stream flagged (l.flagged, l.nflagged).
func (k *bruteKernels) launchRefine(drv *cuda.Driver, stream cuda.Stream, l bruteLaunch) error {
	a := k.rfArgs
	a.SetPtr(0, l.lat)
	a.SetPtr(1, l.lon)
	a.SetPtr(2, l.ref64)
	a.SetInt32(3, int32(l.nref))
	a.SetPtr(4, l.flagged)
	a.SetPtr(5, l.nflagged)
	a.SetPtr(6, l.outIdx)
	a.SetPtr(7, l.outDist)
	// refine loops over however many observations were flagged (read on the
	// device), so its grid does not wait for the count.
	if err := drv.Launch(k.refine, cuda.Dim3{X: uint32(l.refineBlocks)}, cuda.Dim3{X: kernels.RefineThreads}, 0, stream, a); err != nil {
		return fmt.Errorf("refine: %w", err)
	}
	return nil
}
