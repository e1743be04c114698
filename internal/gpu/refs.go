package gpu

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/internal/index"
)

// deviceRefs holds the references on one GPU: float32 and float64 unit
// vectors for the exact kernels, the distinct-to-input index map when
// duplicates were merged (dups), radian columns for the seed port, and the
// pinned staging they are sent through.
type deviceRefs struct {
	ref32, ref64, orig, lat, lon buffer
	host                         pinnedHost
	dups                         bool
	// The grid index: cell starts, references sorted by cell, the sphere's
	// z-runs a column (for side runsSide), and the sort's scratch.
	cellStart, sorted, runs, trimmed buffer
	keys, sums                       buffer
	runsSide                         int
	runsPtr                          cuda.DevicePtr // the buffer runsSide was uploaded to
	// The k-d tree (index.PackedTree), when the plan chose one.
	treeNodes, treeRefs buffer
	// The face cells' candidate lists (cells.go), when the plan
	// allows them and they could be made.
	cells cellLists
	// from is the prepared set (Request.Prepared, read-only) the vectors
	// were last staged from: a query against it again sends nothing.
	from *index.RefSet
	// built is the index over from on the device: a stream's chunks,
	// queried with one kept plan, build it once (rebuilding it was 119 of
	// a 2^27 stream's 127.5 ms of kernels on 4 x H100).
	built builtIndex
}

// builtIndex says which index over a prepared set the device holds. Any
// staging of references clears it; a grid build of another shape (a
// k-nearest query's) replaces its grid, not the face cells made before.
type builtIndex struct {
	grid      index.GridShape   // the grid index's shape (G 0: none)
	tree      *index.PackedTree // the k-d tree uploaded (nil: none)
	cells     cellsKey          // the face cells asked for, and how they came out
	cellsMade int               // the side they were made at (0: refused)
}

// cellsKey is what face cells are made from: a grid index and a side.
type cellsKey struct {
	grid index.GridShape
	side int
}

// holds reports whether the device's references are the prepared set refs
// (so the index in built is over them).
func (r *deviceRefs) holds(refs *index.RefSet) bool { return refs != nil && r.from == refs }

// ensureGrid builds the grid index of shape over refs, unless the device
// holds it already.
func (r *deviceRefs) ensureGrid(drv *cuda.Driver, k *gridKernels, stream cuda.Stream, shape index.GridShape, refs *index.RefSet) error {
	if r.holds(refs) && r.built.grid == shape {
		return nil
	}
	r.built.grid = index.GridShape{}
	if err := r.buildGrid(drv, k, stream, shape, refs.N); err != nil {
		return err
	}
	r.built.grid = shape
	return nil
}

// ensureTree uploads the k-d tree t of refs, unless the device holds it.
func (r *deviceRefs) ensureTree(drv *cuda.Driver, t *index.PackedTree, refs *index.RefSet) error {
	if r.holds(refs) && r.built.tree == t {
		return nil
	}
	r.built.tree = nil
	if err := r.uploadTree(drv, t); err != nil {
		return err
	}
	r.built.tree = t
	return nil
}

// ensureCells makes the face cells of side from the grid index of shape
// over refs (built before on stream), unless the device holds them, made
// or refused, already.
func (r *deviceRefs) ensureCells(drv *cuda.Driver, k *cellsKernels, stream cuda.Stream, shape index.GridShape, refs *index.RefSet, side int) error {
	key := cellsKey{grid: shape, side: side}
	if r.holds(refs) && r.built.cells == key {
		r.cells.side = r.built.cellsMade
		return nil
	}
	r.built.cells = cellsKey{}
	if _, err := r.cells.build(drv, k, stream, r, shape, refs.N, side); err != nil {
		return err
	}
	r.built.cells, r.built.cellsMade = key, r.cells.side
	return nil
}

// buildGrid builds the grid index of the uploaded references on the device,
// on stream: keys, histogram, scan, scatter. The runs table depends only on
// the grid side and is uploaded when the side changes.
func (r *deviceRefs) buildGrid(drv *cuda.Driver, k *gridKernels, stream cuda.Stream, shape index.GridShape, nref int) error {
	cells, sums := shape.Cells(), shape.ScanSums()
	if r.runsSide != shape.G {
		r.runsSide = 0 // until the table of this side is on the device
	}
	for _, b := range []struct {
		buf   *buffer
		bytes int
	}{
		{&r.cellStart, 4 * cells}, {&r.sums, 4 * sums},
		{&r.keys, sortKeyBytes * nref}, {&r.sorted, 16 * nref}, {&r.runs, 8 * shape.G * shape.G},
		{&r.trimmed, 8 * shape.G * shape.G},
	} {
		if err := b.buf.ensure(drv, b.bytes, false, 0); err != nil {
			return fmt.Errorf("allocating the grid index (%d MiB): %w", b.bytes>>20, err)
		}
	}
	if r.runsSide != shape.G || r.runs.ptr != r.runsPtr {
		runs := index.SphereRunsTable(shape.G)
		if err := pinned(runs, func(p unsafe.Pointer) error { return drv.MemcpyHtoD(r.runs.ptr, p, uint64(2*len(runs))) }); err != nil {
			return err
		}
		// A copy from pageable memory may return before the data reaches
		// the device, and the kernels run on non-blocking streams that do
		// not wait for it: finish it here (only when the side changes).
		if err := drv.Synchronize(); err != nil {
			return err
		}
		r.runsSide, r.runsPtr = shape.G, r.runs.ptr
	}
	return k.buildIndex(drv, stream, indexBuild{shape: shape, xyzw: r.ref32.ptr, nref: nref,
		scratch: sortBufs{keys: r.keys.ptr, hist: r.cellStart.ptr, sums: r.sums.ptr},
		sorted:  r.sorted.ptr, runs: r.runs.ptr, trimmed: r.trimmed.ptr})
}

// uploadTree sends a k-d tree to the device.
func (r *deviceRefs) uploadTree(drv *cuda.Driver, t *index.PackedTree) error {
	for _, a := range []struct {
		buf *buffer
		src []float32
	}{{&r.treeNodes, t.Nodes}, {&r.treeRefs, t.Refs}} {
		if err := a.buf.ensure(drv, 4*len(a.src), false, 0); err != nil {
			return fmt.Errorf("allocating the k-d tree (%d MiB): %w", len(a.src)>>18, err)
		}
		err := pinned(a.src, func(p unsafe.Pointer) error { return drv.MemcpyHtoD(a.buf.ptr, p, uint64(4*len(a.src))) })
		if err != nil {
			return err
		}
	}
	// As for the runs table: a copy from pageable memory may return before
	// the data reaches the device.
	return drv.Synchronize()
}

// stage copies the prepared references to the device on stream through
// pinned staging: the float4 and float64 unit vectors, the map from distinct
// to input index when duplicates were merged, and for the seed port the
// original radian columns (seed holds them, in the observations' precision).
// The staging is free again once stream has synchronized.
func (r *deviceRefs) stage(drv *cuda.Driver, stream cuda.Stream, refs *index.RefSet, seed index.Points) error {
	r.from, r.built = nil, builtIndex{}
	parts := r.stagedParts(refs, seed)
	total := 0
	for _, p := range parts {
		total += align8(p.bytes)
	}
	if err := r.host.ensure(drv, total); err != nil {
		return fmt.Errorf("pinning %d MiB of host memory: %w", total>>20, err)
	}
	off := 0
	for _, p := range parts {
		dst := unsafe.Add(r.host.p, off)
		p.fill(dst)
		if err := p.buf.ensure(drv, p.bytes, false, 0); err != nil {
			return fmt.Errorf("allocating %d MiB: %w", p.bytes>>20, err)
		}
		if err := drv.MemcpyHtoDAsync(p.buf.ptr, dst, uint64(p.bytes), stream); err != nil {
			return err
		}
		off += align8(p.bytes)
	}
	r.dups = refs.Dups
	return nil
}

// stagedPart is one array of the references on its way to the device.
type stagedPart struct {
	buf   *buffer
	bytes int
	fill  func(dst unsafe.Pointer)
}

func (r *deviceRefs) stagedParts(refs *index.RefSet, seed index.Points) []stagedPart {
	parts := []stagedPart{
		{&r.ref32, 4 * len(refs.Xyzw), func(dst unsafe.Pointer) { copy(view[float32](dst, 0, len(refs.Xyzw)), refs.Xyzw) }},
		{&r.ref64, 8 * len(refs.Xyz64), func(dst unsafe.Pointer) { copy(view[float64](dst, 0, len(refs.Xyz64)), refs.Xyz64) }},
	}
	if refs.Dups {
		parts = append(parts, stagedPart{&r.orig, 4 * len(refs.Orig),
			func(dst unsafe.Pointer) { copy(view[uint32](dst, 0, len(refs.Orig)), refs.Orig) }})
	}
	if n := seed.Len(); n > 0 {
		parts = append(parts, seedColumn(&r.lat, seed, n, true), seedColumn(&r.lon, seed, n, false))
	}
	return parts
}

// seedColumn stages the latitude (lat set) or longitude column of the seed
// port's references in the precision of seed's columns.
func seedColumn(buf *buffer, seed index.Points, n int, lat bool) stagedPart {
	if seed.Is32() {
		return stagedPart{buf, 4 * n, func(dst unsafe.Pointer) {
			col := seed.Lon32
			if lat {
				col = seed.Lat32
			}
			copy(view[float32](dst, 0, n), col)
		}}
	}
	return stagedPart{buf, 8 * n, func(dst unsafe.Pointer) {
		out := view[float64](dst, 0, n)
		for i := range out {
			la, lo := seed.At(i)
			out[i] = lo
			if lat {
				out[i] = la
			}
		}
	}}
}

func align8(n int) int { return (n + 7) &^ 7 }

// stagePrepared is stage for a prepared set: nothing is sent when the
// device holds it already.
func (r *deviceRefs) stagePrepared(drv *cuda.Driver, stream cuda.Stream, refs *index.RefSet, prepared bool) error {
	if prepared && r.from == refs {
		return nil
	}
	if err := r.stage(drv, stream, refs, index.Points{}); err != nil {
		return err
	}
	if prepared {
		r.from = refs
	}
	return nil
}

func (r *deviceRefs) free(drv *cuda.Driver) error {
	r.runsSide, r.from, r.built = 0, nil, builtIndex{}
	return errors.Join(r.ref32.free(drv), r.ref64.free(drv), r.orig.free(drv), r.lat.free(drv), r.lon.free(drv),
		r.host.free(drv),
		r.cellStart.free(drv), r.sorted.free(drv), r.runs.free(drv),
		r.keys.free(drv), r.sums.free(drv), r.trimmed.free(drv), r.treeNodes.free(drv), r.treeRefs.free(drv), r.cells.free(drv))
}
