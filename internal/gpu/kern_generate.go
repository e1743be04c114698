package gpu

import (
	"fmt"
	"unsafe"

	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/kernels"
)

// generateKernels wraps generate.cu: synthetic observations made on the
// device, the twins of sphere.SphereAt and sphere.SeedUniformAt.
type generateKernels struct {
	fn   [2]cuda.Function // by GenKind
	args *cuda.Args
}

func loadGenerate(drv *cuda.Driver, mod cuda.Module) (*generateKernels, error) {
	k := &generateKernels{}
	return k, loadEntries(drv, mod, []entry{
		{"gen_sphere", &k.fn[index.GenSphere], &k.args}, {"gen_seed", &k.fn[index.GenSeed], nil},
	})
}

// run writes the points of g (float64 radians) to lat[0..g.N), lon[0..g.N).
func (k *generateKernels) run(drv *cuda.Driver, stream cuda.Stream, g index.Generated, lat, lon cuda.DevicePtr) error {
	if g.N <= 0 || g.N > 1<<31-1 || (g.Kind != index.GenSphere && g.Kind != index.GenSeed) {
		return fmt.Errorf("generate: bad set (%d points, kind %d)", g.N, g.Kind)
	}
	a := k.args
	a.SetUint64(0, g.First)
	a.SetInt32(1, int32(g.N))
	a.SetUint64(2, g.Seed)
	a.SetPtr(3, lat)
	a.SetPtr(4, lon)
	threads := kernels.GenThreads
	if err := drv.Launch(k.fn[g.Kind], blocksFor(g.N, threads), cuda.Dim3{X: uint32(threads)}, 0, stream, a); err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	return nil
}

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
