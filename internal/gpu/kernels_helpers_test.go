package gpu

import (
	"fmt"
	"unsafe"

	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/internal/index"
)

// Device helpers only the tests use: the generator's and the twins' output
// copied back to the host.

// generateInto makes g on the device and copies it into lat and lon (for
// tests and checks; queries generate into their own buffers).
func (d *gpuDevice) generateInto(g index.Generated, lat, lon []float64) error {
	var dl, dn buffer
	defer dl.free(d.drv)
	defer dn.free(d.drv)
	if err := ensureAll(d.drv, []alloc{{buf: &dl, bytes: 8 * g.N}, {buf: &dn, bytes: 8 * g.N}}, 0); err != nil {
		return err
	}
	if err := d.generate.run(d.drv, 0, g, dl.ptr, dn.ptr); err != nil {
		return err
	}
	if err := d.drv.Synchronize(); err != nil {
		return err
	}
	for _, c := range []struct {
		dst []float64
		src cuda.DevicePtr
	}{{lat, dl.ptr}, {lon, dn.ptr}} {
		err := pinned(c.dst, func(p unsafe.Pointer) error { return d.drv.MemcpyDtoH(p, c.src, uint64(8*g.N)) })
		if err != nil {
			return err
		}
	}
	return nil
}

// runTwin runs go_twin_check over n (a, b, c, d) quadruples at in, six
// float64 results each to out.
func (k *moveKernels) runTwin(drv *cuda.Driver, stream cuda.Stream, n int, in, out cuda.DevicePtr) error {
	a := k.twinArgs
	a.SetInt32(0, int32(n))
	a.SetPtr(1, in)
	a.SetPtr(2, out)
	if err := drv.Launch(k.twin, blocksFor(n, 128), cuda.Dim3{X: 128}, 0, stream, a); err != nil {
		return fmt.Errorf("go_twin_check: %w", err)
	}
	return nil
}
