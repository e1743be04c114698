package gpu

import (
	"errors"
	"fmt"

	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/kernels"
)

// The face-cell query (cells.cu) answers a nearest query with no
// observation sort: each observation ranks the candidate list of its cell
// of the cube map. The lists are built on the device from a grid index of
// the references once per reference set, cells with too many candidates
// split into finer levels; where a list cannot be made even so (references
// crowded into one spot, past maxCellsLevels), the GPU answers with the
// plan's index (grid or k-d tree) instead.

// maxCellsLevels is how many times a crowded cell may be split
// (kernels.CellsSplitN^2 children each time): a 4^4-times finer edge
// where the references crowd.
const maxCellsLevels = 4

// maxCellsPlaces bounds the cells of all levels: 8 M cells hold 4 GiB of
// lists.
const maxCellsPlaces = 8 << 20

// cellLists is the face-cell index on one GPU.
type cellLists struct {
	lists, counts, status buffer
	todo                  [2]buffer // the split cells of a level, the next level's parents
	pass                  [2]buffer // their survivors, passed down to their children
	side                  int       // cells a face edge of the lists on the device; 0: none usable
	places, split, levels int       // cells of all levels, the ones split, and levels below the first
	refused               string    // why there are no lists, when side is 0
	unchecked             bool      // the first level was queued alone, its outcome not yet read (speculate)
	statusHost            [kernels.CellsStatusLen]uint32
	statusPinned          pinnedHost // the status words, copied back after each level
}

// build makes the lists of side cells a face edge, and of the finer levels
// where the references crowd, from the grid index of nref references in r
// (built on stream before), waiting for each level's outcome. It reports
// whether every cell has its list; where one cannot be made it leaves
// c.side 0 and returns no error: the caller queries through the plan's
// index.
func (c *cellLists) build(drv *cuda.Driver, k *cellsKernels, stream cuda.Stream, r *deviceRefs, shape index.GridShape, nref, side int) (bool, error) {
	lv, ok, err := c.start(drv, k, stream, r, shape, nref, side)
	if err != nil || !ok {
		return false, err
	}
	for level := 0; ; level++ {
		if err := drv.StreamSynchronize(stream); err != nil {
			return false, err
		}
		c.takeStatus()
		nsplit := int(c.statusHost[kernels.CellsSplit])
		if c.statusHost[kernels.CellsFailed] > 0 || nsplit == 0 {
			break
		}
		// The next level: the split cells' children, placed after every
		// cell so far.
		c.split += nsplit
		c.levels++
		lv.side *= kernels.CellsSplitN
		lv.parents, lv.passIn, lv.base = c.todo[level%2].ptr, lv.passOut, c.places
		lv.ncells = nsplit * kernels.CellsSplitN * kernels.CellsSplitN
		lv.splitAbove = c.splitAbove(level + 1)
		c.places += lv.ncells
		if err := drv.MemsetD32Async(c.status.ptr+4*kernels.CellsSplit, 0, 1, stream); err != nil {
			return false, err
		}
		if ok, err := c.queueLevel(drv, k, stream, &lv, level+1); err != nil || !ok {
			return false, err
		}
	}
	if n := c.statusHost[kernels.CellsFailed]; n > 0 {
		c.refused = fmt.Sprintf("%d cells without a list after %d levels", n, c.levels+1)
		return false, c.freeLists(drv)
	}
	c.side = side
	return true, nil
}

// speculate queues the first level's lists alone and takes them as made,
// with no wait: the query through them (cells_query) checks the status on
// the device and answers nothing where a cell split or failed, and confirm
// tells the host so once the stream is done. It reports false where the
// lists would not fit (c.side 0, as build).
func (c *cellLists) speculate(drv *cuda.Driver, k *cellsKernels, stream cuda.Stream, r *deviceRefs, shape index.GridShape, nref, side int) (bool, error) {
	if _, ok, err := c.start(drv, k, stream, r, shape, nref, side); err != nil || !ok {
		return false, err
	}
	c.side, c.unchecked = side, true
	return true, nil
}

// confirm reads, after the stream's work, the outcome of a speculated first
// level: whether every cell got its list there, as the query assumed.
// Where one did not, the lists are dropped (c.side 0) for a build.
func (c *cellLists) confirm() bool {
	c.unchecked = false
	c.takeStatus()
	if c.statusHost[kernels.CellsSplit] > 0 || c.statusHost[kernels.CellsFailed] > 0 {
		c.side = 0
		return false
	}
	return true
}

// takeStatus reads the status words the last queued level copied back,
// once the stream is done with them.
func (c *cellLists) takeStatus() {
	c.statusHost = *(*[kernels.CellsStatusLen]uint32)(c.statusPinned.p)
}

// start queues the first level of the lists: the six faces' cells, and
// returns its launch, which build goes on from; false where the lists
// would not fit (c.side 0, the reason in c.refused).
func (c *cellLists) start(drv *cuda.Driver, k *cellsKernels, stream cuda.Stream, r *deviceRefs, shape index.GridShape, nref, side int) (cellsBuild, bool, error) {
	c.side, c.split, c.levels, c.refused, c.unchecked = 0, 0, 0, "", false
	c.places = index.FaceCells(side)
	lv := cellsBuild{side: side, ncells: c.places, grid: shape, nref: nref, splitAbove: c.splitAbove(0),
		cellStart: r.cellStart.ptr, sorted: r.sorted.ptr, ref64: r.ref64.ptr}
	if err := c.status.ensure(drv, 4*kernels.CellsStatusLen, false, 0); err != nil {
		return lv, false, err
	}
	if err := c.statusPinned.ensure(drv, 4*kernels.CellsStatusLen); err != nil {
		return lv, false, err
	}
	if err := drv.MemsetD32Async(c.status.ptr, 0, kernels.CellsStatusLen, stream); err != nil {
		return lv, false, err
	}
	lv.status = c.status.ptr
	ok, err := c.queueLevel(drv, k, stream, &lv, 0)
	return lv, ok, err
}

// queueLevel queues level's build, lv, and the copy of its status back;
// false where its lists would not fit (the lists freed, c.side 0).
func (c *cellLists) queueLevel(drv *cuda.Driver, k *cellsKernels, stream cuda.Stream, lv *cellsBuild, level int) (bool, error) {
	if ok, err := c.room(drv, level, lv.ncells); err != nil || !ok {
		c.refused = fmt.Sprintf("%d cells would not fit in %d MiB", c.places, 16*kernels.CellsCap*min(c.places, maxCellsPlaces)>>20)
		return false, errors.Join(err, c.freeLists(drv))
	}
	lv.lists, lv.counts, lv.todo = c.lists.ptr, c.counts.ptr, c.todo[level%2].ptr
	lv.passOut = 0
	if lv.splitAbove > 0 {
		lv.passOut = c.pass[level%2].ptr
	}
	if err := k.runBuild(drv, stream, *lv); err != nil {
		return false, err
	}
	return true, drv.MemcpyDtoHAsync(c.statusPinned.p, c.status.ptr, 4*kernels.CellsStatusLen, stream)
}

// splitAbove is the list length above which a cell of level splits (0:
// the last level splits none).
func (c *cellLists) splitAbove(level int) int {
	if level >= maxCellsLevels {
		return 0
	}
	return index.CellsSplitAbove
}

// room sizes the buffers for a level of ncells cells ending at c.places,
// keeping the levels before; false when the lists would pass
// maxCellsPlaces or the GPU's free memory.
func (c *cellLists) room(drv *cuda.Driver, level, ncells int) (bool, error) {
	if c.places > maxCellsPlaces {
		return false, nil
	}
	for _, b := range []struct {
		buf   *buffer
		bytes int
		keep  bool
	}{{&c.lists, 16 * kernels.CellsCap * c.places, level > 0}, {&c.counts, 4 * c.places, level > 0},
		{&c.todo[level%2], 16 * ncells, false},
		{&c.pass[level%2], 4 * kernels.CellsPassSlots * (1 + kernels.CellsPass), false}} {
		var err error
		if b.keep {
			err = b.buf.growKeep(drv, b.bytes)
		} else {
			err = b.buf.ensure(drv, b.bytes, false, 0)
		}
		if cuda.IsOutOfMemory(err) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("allocating the face cells' lists (%d MiB): %w", b.bytes>>20, err)
		}
	}
	return true, nil
}

// note says how the lists came out.
func (c *cellLists) note() string {
	s := c.statusHost
	if c.side == 0 {
		return "no face cells: " + c.refused
	}
	finer := ""
	if c.levels > 0 {
		finer = fmt.Sprintf(" (%d split into %d finer levels)", c.split, c.levels)
	}
	return fmt.Sprintf("face cells 6 x %d^2%s, %.1f candidates a cell (at most %d), no observation sort",
		c.side, finer, float64(s[kernels.CellsEntries])/float64(c.places-c.split), s[kernels.CellsLongest])
}

// freeLists gives back the lists' memory, which the jobs' buffers may
// then use, when the lists were refused.
func (c *cellLists) freeLists(drv *cuda.Driver) error {
	c.side = 0
	return errors.Join(c.lists.free(drv), c.counts.free(drv), c.todo[0].free(drv), c.todo[1].free(drv),
		c.pass[0].free(drv), c.pass[1].free(drv))
}

func (c *cellLists) free(drv *cuda.Driver) error {
	return errors.Join(c.freeLists(drv), c.status.free(drv), c.statusPinned.free(drv))
}
