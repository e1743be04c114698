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
package index
