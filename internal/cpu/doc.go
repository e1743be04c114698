// Package cpu is the exact nearest-reference engine on all cores of the
// host. It implements engine.Engine and engine.Session: goroutines of one
// team take batches of observations and answer each through the face cells
// (a float64 port of the GPU's cells.cu), the plan's grid index or k-d tree,
// or the AVX2 brute-force scan. Every assembly routine has a portable Go
// twin, which the tests compare bit for bit; built with GOAMD64=v3 (fused
// multiply-adds) the vector paths must still give the scalar answers
// (.ci/run tests that build). It never imports the CUDA bindings.
//
// # Files
//
//	cpu.go                       CPU: the engine, its team and reused memory, brute force, the request it runs
//	scan.go, scan_amd64.go/.s    the brute-force scan of reference tiles (AVX2), scan_other.go its portable build
//	lanes.go                     three observations ranked against a tile's lanes (AVX2 and Go)
//	grid.go                      the grid query: planned index, face cells or per-observation search
//	grid_cell_order.go           the grid query in cell order (observations sorted by cell, as on the GPU)
//	tree_order.go                the k-d tree query in chunks sorted along the tree
//	cells.go                     the face cells: build from tile pools, refusal, query
//	cells_gather.go              the tile pools gathered through a coarse fitted grid, the k-d tree built lazily
//	cells_pool.go, cells_pool_amd64.go/.s   the pools' vector scans; cells_pool_other.go their portable build
//	knn.go                       k nearest and radius queries
//	index.go                     CPUIndex: references prepared once for many small queries
//	session.go, session_movers.go  CPU sessions: resident observations, replacements, moving references
package cpu
