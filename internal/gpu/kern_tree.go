package gpu

import (
	"fmt"

	"github.com/geoknn/geoknn/cuda"
)

// treeKernels wraps tree.cu: the nearest-reference query through a k-d
// tree built on the host (internal/index/kdtree_packed.go).
type treeKernels struct {
	query   cuda.Function
	args    *cuda.Args
	threads int // tree_query's block size
}

func loadTree(drv *cuda.Driver, mod cuda.Module) (*treeKernels, error) {
	k := &treeKernels{}
	if err := loadEntries(drv, mod, []entry{{"tree_query", &k.query, &k.args}}); err != nil {
		return nil, err
	}
	threads, err := drv.FuncGetAttribute(k.query, cuda.FuncMaxThreadsPerBlock)
	if err != nil {
		return nil, err
	}
	k.threads = threads
	return k, nil
}

// treeQuery is one tree_query launch: sorted observation records against a
// tree on the device; answers go to outIdx/outDist at each record's index,
// and the near ties re-ranked in fp64 are added to *refined.
type treeQuery struct {
	obs             cuda.DevicePtr
	nobs            int
	nodes, refs     cuda.DevicePtr // the tree's nodes and its references in leaf order
	ref64           cuda.DevicePtr
	outIdx, outDist cuda.DevicePtr
	refined         cuda.DevicePtr
}

func (k *treeKernels) run(drv *cuda.Driver, stream cuda.Stream, q treeQuery) error {
	if q.nobs <= 0 || q.nodes == 0 || q.refs == 0 {
		return fmt.Errorf("tree query: %d observations, nodes %#x, references %#x", q.nobs, q.nodes, q.refs)
	}
	a := k.args
	a.SetPtr(0, q.obs)
	a.SetInt32(1, int32(q.nobs))
	for i, p := range []cuda.DevicePtr{q.nodes, q.refs, q.ref64, q.outIdx, q.outDist, q.refined} {
		a.SetPtr(2+i, p)
	}
	if err := drv.Launch(k.query, blocksFor(q.nobs, k.threads), cuda.Dim3{X: uint32(k.threads)}, 0, stream, a); err != nil {
		return fmt.Errorf("tree_query: %w", err)
	}
	return nil
}
