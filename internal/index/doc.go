// Package index holds what both engines share below the contract: the
// points and the prepared reference sets, the spatial indexes over them
// (the grid index, the k-d tree and its packed layout for tree.cu), the
// face cells' geometry, and the planner that picks, from a sample of the
// query, a grid side, the k-d tree or brute force by a cost model. The
// CPU engine searches these indexes directly; the GPU engine builds the
// same grid on the device, or sends the tree the host built.
//
// Everything is exact in float64, ranks by the squared chord between unit
// vectors, and breaks ties to the lowest reference index. The vector
// trigonometry (four unit vectors or angles at a time in AVX2) has Go twins
// that its tests compare bit for bit, also built with GOAMD64=v3. Nothing
// here imports the CUDA bindings: the kernels' launch constants come from
// internal/kernels, which does not either.
//
// # Files
//
//	points.go                  Points: radian columns or generated points; unit vectors and the twins of trig4
//	refset.go                  RefSet: references prepared (unit vectors, duplicates merged, interleaved for GPUs)
//	grid.go                    the grid's cell geometry (shape, slack, runs table) both engines use
//	gridindex.go               the grid index over the references and its nearest search
//	neighbours.go              Neighbour and TopK; the grid's k-nearest and radius walks; ChordLimit
//	kdtree.go                  the k-d tree: build, nearest, k nearest
//	kdtree_select.go           the tree's parallel median selection
//	kdtree_packed.go           the tree packed as tree.cu reads it, and the CPU's walk of that layout
//	facecells.go               the face cells' geometry: cells a face edge for a query, list capacity
//	plan.go                    the cost model and the planner
//	trig4_amd64.go/.s          four unit vectors or angles at a time in AVX2; trig4_other.go the portable build
//	features_amd64.go/.s       the CPUID probe for AVX2 and FMA; features_other.go: none
package index
