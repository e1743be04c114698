// Package engine computes, for every observation, the nearest reference on
// the sphere by great-circle distance: exactly, on the CPU (all cores) or on
// NVIDIA GPUs (one goroutine per GPU through the CUDA driver API). The root
// package geoknn is its only caller and the users' door.
//
// Both engines rank candidates by the squared chord between unit vectors,
// which is monotone in the haversine distance. The CPU ranks in float64; the
// GPU ranks in float32 and re-ranks in float64 every observation whose
// winner is within the proven float32 error bound of the runner-up, so both
// return the float64 answer, ties to the lowest reference index, and the
// distance computed in float64 for the chosen reference.
//
// # A query's way through the engine
//
//  1. The references are prepared once a query (refset.go): unit vectors,
//     exact duplicates merged (the lowest index stands for all).
//  2. For the grid algorithm a planner (plan.go) runs a 512-observation
//     sample through CPU indexes of several densities and keeps the
//     cheapest by a cost model; where no grid suits the references
//     (crowded into a few places) it samples a k-d tree (cpu_kdtree.go),
//     which both engines walk; otherwise it falls back to brute force.
//  3. On the CPU (cpu*.go), a grid query of at least 8 observations a
//     reference (and 2^14), its grid side not chosen, goes through the
//     CPU's face cells (cpu_cells.go: cells.cu's lists built in float64
//     from tile pools, gathered through a fitted grid for the first level
//     where the references spread and the k-d tree, built where needed,
//     elsewhere; each observation
//     ranking its own cell's list in input order, the tree answering the
//     cells without one); a smaller
//     one, or one whose cells are refused, through the plan's index. Goroutines take batches of
//     observations and run that search or the AVX2 brute-force scan.
//  4. On GPUs (gpu*.go), each device's thread stages the references once
//     (gpu_refs.go), builds the grid index on the device (or sends the k-d
//     tree the host built, laid out by gpu_tree.go) and from it the face
//     cells' candidate lists (gpu_cells.go), then streams jobs through three
//     slots (gpu_stream.go): copy in, rank (through the face cells, else
//     sorted by cell for the grid or tree query), copy out, the kernels of
//     successive jobs in order while copies overlap.
//     Sessions (gpu_session.go) keep observations resident instead and send
//     only references and replacements. Both run the same query path
//     (gpu_query.go), and kern_X.go wraps the kernels of X.cu.
//
// # Files
//
//	api.go, points.go, refset.go    requests, results, stats; points; prepared references
//	grid.go, plan.go                cell geometry shared by both engines; the planner and cost model
//	cpu.go, cpu_scan*.go            CPU engine; brute-force scan (AVX2 assembly and portable Go)
//	cpu_grid.go, cpu_session.go     CPU grid index and search; CPU sessions
//	session.go                      the Session contract, observation sample, session plans
//	gpu.go, device.go               GPU engine; one GPU's context, modules and sizing
//	gpu_memory.go, gpu_refs.go      device, managed and pinned buffers; references on a GPU
//	gpu_query.go                    one query on a stream: sort, rank, answers out, stage times
//	cpu_kdtree.go, gpu_tree.go      the k-d tree; its layout for tree.cu
//	cpu_cells.go                    the CPU's face cells: build, refusal, query
//	cpu_cells_pool*.go, _grid.go    the build's tile pools: vector scans; gathered through a grid
//	gpu_cells.go                    the face cells' lists (cells.cu): layout, levels, unchecked first level, refusal
//	gpu_stream.go, gpu_session.go   streamed jobs; resident sessions
//	kern.go, kern_*.go              typed kernel wrappers, one file per .cu
package engine
