package gpu

import (
	"fmt"

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
