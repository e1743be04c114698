package gpu

import (
	"fmt"

	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/internal/kernels"
)

// knnKernels wraps knn.cu: the k nearest references and the references
// within a radius, over the grid index (brute force: a grid of one cell).
type knnKernels struct {
	reg                 [len(knnRegSizes)]cuda.Function // grid_knn_K for each K of knnRegSizes
	knn, within         cuda.Function                   // grid_knn: lists in local memory, any k to KnnMax
	knnArgs, withinArgs *cuda.Args
}

// knnRegSizes are the k the grid_knn_K entries are compiled for: each keeps
// its K+1 candidates in registers (faster than grid_knn's local memory, but
// every K is a fully unrolled instance: larger ones would swell the PTX).
var knnRegSizes = [...]int{8, 16}

func loadKNN(drv *cuda.Driver, mod cuda.Module) (*knnKernels, error) {
	k := &knnKernels{}
	entries := []entry{{"grid_knn", &k.knn, &k.knnArgs}, {"grid_within", &k.within, &k.withinArgs}}
	for i, size := range knnRegSizes {
		entries = append(entries, entry{name: fmt.Sprintf("grid_knn_%d", size), fn: &k.reg[i]}) // grid_knn's arguments
	}
	return k, loadEntries(drv, mod, entries)
}

// knnFor is the entry that answers k: the smallest register instance that
// holds it, else grid_knn.
func (k *knnKernels) knnFor(n int) cuda.Function {
	for i, size := range knnRegSizes {
		if n <= size {
			return k.reg[i]
		}
	}
	return k.knn
}

// knnLaunch answers the k nearest (within the squared chord maxD2) of
// each observation into rows of k at outIdx/outDist; refined counts the
// near ties re-ranked in fp64.
type knnLaunch struct {
	gridIndexArgs
	k                        int
	maxD2                    float64
	outIdx, outDist, refined cuda.DevicePtr
}

func (k *knnKernels) runKNN(drv *cuda.Driver, stream cuda.Stream, l knnLaunch) error {
	if l.nobs <= 0 || l.shape.G <= 0 || l.k < 1 || l.k > kernels.KnnMax {
		return fmt.Errorf("grid_knn: bad launch (%d observations, grid %d, k %d)", l.nobs, l.shape.G, l.k)
	}
	a := k.knnArgs
	l.set(a)
	a.SetInt32(8, int32(l.k))
	a.SetFloat64(9, l.maxD2)
	a.SetPtr(10, l.outIdx)
	a.SetPtr(11, l.outDist)
	a.SetPtr(12, l.refined)
	if err := drv.Launch(k.knnFor(l.k), blocksFor(l.nobs, kernels.KnnThreads), cuda.Dim3{X: kernels.KnnThreads}, 0, stream, a); err != nil {
		return fmt.Errorf("grid_knn: %w", err)
	}
	return nil
}

// withinLaunch counts each observation's references within the squared
// chord maxD2 into counts (offsets 0), or lists them (index and fp64
// squared chord) from offsets[i] on, adding to counts[0] each row listed
// with other than offsets[i+1]-offsets[i] references.
type withinLaunch struct {
	gridIndexArgs
	maxD2                         float64
	offsets, counts, index, chord cuda.DevicePtr
}

func (k *knnKernels) runWithin(drv *cuda.Driver, stream cuda.Stream, l withinLaunch) error {
	if l.nobs <= 0 || l.shape.G <= 0 {
		return fmt.Errorf("grid_within: bad launch (%d observations, grid %d)", l.nobs, l.shape.G)
	}
	a := k.withinArgs
	l.set(a)
	a.SetFloat64(8, l.maxD2)
	a.SetPtr(9, l.offsets)
	a.SetPtr(10, l.counts)
	a.SetPtr(11, l.index)
	a.SetPtr(12, l.chord)
	if err := drv.Launch(k.within, blocksFor(l.nobs, kernels.KnnThreads), cuda.Dim3{X: kernels.KnnThreads}, 0, stream, a); err != nil {
		return fmt.Errorf("grid_within: %w", err)
	}
	return nil
}
