package gpu

import (
	"fmt"

	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/internal/kernels"
)

// moveKernels wraps move.cu: references moved on the device.
type moveKernels struct {
	move, twin         cuda.Function
	moveArgs, twinArgs *cuda.Args
}

func loadMove(drv *cuda.Driver, mod cuda.Module) (*moveKernels, error) {
	k := &moveKernels{}
	return k, loadEntries(drv, mod, []entry{{"move_refs", &k.move, &k.moveArgs}, {"go_twin_check", &k.twin, &k.twinArgs}})
}

// moveLaunch moves n references (float64 columns lat, lon, heading in
// place, speed in m/s) for dt seconds, or leaves them (!move), and writes
// their unit vectors as float64 triples (xyz) and float32 quadruples (xyzw).
type moveLaunch struct {
	n                        int
	lat, lon, heading, speed cuda.DevicePtr
	dt                       float64
	move                     bool
	xyz, xyzw                cuda.DevicePtr
}

func (k *moveKernels) run(drv *cuda.Driver, stream cuda.Stream, l moveLaunch) error {
	if l.n <= 0 || l.n > 1<<31-1 {
		return fmt.Errorf("move_refs: %d references", l.n)
	}
	a := k.moveArgs
	a.SetInt32(0, int32(l.n))
	for i, p := range []cuda.DevicePtr{l.lat, l.lon, l.heading, l.speed} {
		a.SetPtr(1+i, p)
	}
	a.SetFloat64(5, l.dt)
	a.SetInt32(6, boolInt32(l.move))
	a.SetPtr(7, l.xyz)
	a.SetPtr(8, l.xyzw)
	threads := kernels.MoveThreads
	if err := drv.Launch(k.move, blocksFor(l.n, threads), cuda.Dim3{X: uint32(threads)}, 0, stream, k.moveArgs); err != nil {
		return fmt.Errorf("move_refs: %w", err)
	}
	return nil
}

func boolInt32(b bool) int32 {
	if b {
		return 1
	}
	return 0
}
