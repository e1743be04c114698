package gpu

import (
	"fmt"
	"math"

	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/kernels"
)

// cellsKernels wraps cells.cu: candidate lists of cube-face cells, built
// from the references' grid index, and the query through them, which
// needs no observation sort.
type cellsKernels struct {
	build                cuda.Function
	query                [2]cuda.Function // [0] float64 columns, [1] float32
	buildArgs, queryArgs *cuda.Args
}

func loadCells(drv *cuda.Driver, mod cuda.Module) (*cellsKernels, error) {
	k := &cellsKernels{}
	err := loadEntries(drv, mod, []entry{{"cells_build", &k.build, &k.buildArgs},
		{"cells_query_f64", &k.query[0], &k.queryArgs}, {"cells_query_f32", &k.query[1], nil}})
	return k, err
}

// cellsBuild is one cells_build launch: one level of the lists, side cells
// a face edge, from the grid index (cellStart, sorted, of grid's shape) and
// the references' float64 vectors. Level 0 (parents 0) makes the six faces'
// cells at places 0 to 6 side^2; a later level the children of the parents
// (n of them, kernels.CellsSplitN^2 children each) from place base on.
// Cells whose lists would pass splitAbove entries (0: none) split into
// todo, and their survivors go to passOut;
// a later level's children take their parents' survivors from passIn (the
// previous level's passOut; 0 at level 0); status (kernels.CellsStatusLen
// words) receives the outcome.
type cellsBuild struct {
	side, ncells             int
	parents                  cuda.DevicePtr
	base                     int
	splitAbove               int
	grid                     index.GridShape
	nref                     int // references in the index (they set the ball search's first radius)
	cellStart, sorted, ref64 cuda.DevicePtr
	lists, counts            cuda.DevicePtr
	todo, passIn, passOut    cuda.DevicePtr
	status                   cuda.DevicePtr
}

func (k *cellsKernels) runBuild(drv *cuda.Driver, stream cuda.Stream, b cellsBuild) error {
	if b.side <= 0 || b.ncells <= 0 || b.base+b.ncells > math.MaxInt32 || b.grid.G <= 0 {
		return fmt.Errorf("cells_build: %d cells a face edge, %d cells from %d, grid side %d", b.side, b.ncells, b.base, b.grid.G)
	}
	a := k.buildArgs
	a.SetInt32(0, int32(b.side))
	a.SetInt32(1, int32(b.ncells))
	a.SetPtr(2, b.parents)
	a.SetUint32(3, uint32(b.base))
	a.SetInt32(4, int32(b.splitAbove))
	a.SetInt32(5, int32(b.grid.G))
	a.SetFloat32(6, b.grid.H)
	// A first search radius of 1.5 mean spacings of nref uniform points
	// finds most cells' references at once.
	a.SetFloat32(7, float32(1.5*math.Sqrt(4*math.Pi/float64(max(b.nref, 1)))))
	for i, p := range []cuda.DevicePtr{b.cellStart, b.sorted, b.ref64, b.lists, b.counts, b.todo, b.passIn, b.passOut, b.status} {
		a.SetPtr(8+i, p)
	}
	err := drv.Launch(k.build, blocksFor(b.ncells, kernels.CellsBuildWarps),
		cuda.Dim3{X: 32 * kernels.CellsBuildWarps}, 0, stream, a)
	if err != nil {
		return fmt.Errorf("cells_build: %w", err)
	}
	return nil
}

// cellsQuery is one cells_query launch: the observations' radian columns
// (prec 0: float64, 1: float32) against the lists; answers in input order,
// none where the build's status (kernels.CellsStatusLen words) says a cell
// split or failed at the last level built.
type cellsQuery struct {
	prec                   int
	lat, lon               cuda.DevicePtr
	nobs, side             int
	counts, lists, ref64   cuda.DevicePtr
	outIdx, outDist, nflag cuda.DevicePtr
	status                 cuda.DevicePtr
}

func (k *cellsKernels) run(drv *cuda.Driver, stream cuda.Stream, q cellsQuery) error {
	if q.nobs <= 0 || q.side <= 0 || q.lists == 0 || q.status == 0 {
		return fmt.Errorf("cells_query: %d observations, %d cells a face edge, lists %#x, status %#x", q.nobs, q.side, q.lists, q.status)
	}
	a := k.queryArgs
	a.SetPtr(0, q.lat)
	a.SetPtr(1, q.lon)
	a.SetInt32(2, int32(q.nobs))
	a.SetInt32(3, int32(q.side))
	for i, p := range []cuda.DevicePtr{q.counts, q.lists, q.ref64, q.outIdx, q.outDist, q.nflag, q.status} {
		a.SetPtr(4+i, p)
	}
	err := drv.Launch(k.query[q.prec], blocksFor(q.nobs, kernels.CellsThreads), cuda.Dim3{X: kernels.CellsThreads}, 0, stream, a)
	if err != nil {
		return fmt.Errorf("cells_query: %w", err)
	}
	return nil
}
