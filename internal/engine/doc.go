// Package engine is the contract between the root package geoknn and its
// two engines, and the spatial indexes and planning they share. It holds
// no engine: internal/cpu answers on all cores, internal/gpu on NVIDIA
// GPUs; the root package opens one or the other (falling back to the CPU)
// and speaks to it through Engine and Session. Nothing here imports the
// CUDA bindings.
//
// Both engines rank candidates by the squared chord between unit vectors,
// which is monotone in the haversine distance. The CPU ranks in float64;
// the GPU ranks in float32 and re-ranks in float64 every observation whose
// winner is within the proven float32 error bound of the runner-up, so both
// return the float64 answer, ties to the lowest reference index, and the
// distance computed in float64 for the chosen reference.
//
// # A query's way
//
//  1. The root package builds a Request (observations, references,
//     algorithm) and calls Engine.Nearest, KNearest or Within.
//  2. The engine prepares the references once a query (RefSet: unit
//     vectors, exact duplicates merged, the lowest index standing for all).
//  3. For the grid algorithm the planner (PlanGrid) runs a 512-observation
//     sample through the grid index at several densities and keeps the
//     cheapest by a cost model; where no grid suits the references
//     (crowded into a few places) it samples the k-d tree, which both
//     engines walk; otherwise it falls back to brute force.
//  4. The engine answers through the plan's index, or its face cells
//     (whose geometry both share: facecells.go), into the caller's Result.
//
// # Files
//
//	api.go                     Algorithm, Request, Prepared, Result, Stats, the Engine interface, request checks
//	session.go                 the Session and Pending interfaces, session options and plans, observation sample
//	session_movers.go          moving references (Movers, Advance) and their checks
//	points.go                  Points: radian columns or generated points; unit vectors and their Go twins
//	refset.go                  RefSet: references prepared (unit vectors, duplicates merged, interleaved for GPUs)
//	neighbours.go              Neighbour and TopK, the grid's k-nearest and radius walks, KResult, WithinResult
//	grid.go                    the grid's cell geometry (shape, slack) both engines use
//	gridindex.go               the grid index over the references and its nearest search
//	plan.go                    the cost model and the planner that picks grid side, k-d tree or brute force
//	kdtree.go, kdtree_select.go  the k-d tree and its parallel median selection
//	kdtree_packed.go           the k-d tree packed as tree.cu reads it, and the CPU's walk of that layout
//	facecells.go               the face cells' geometry: cells a face edge for a query, list capacity
//	trig4_amd64.go/.s          four unit vectors or angles at a time in AVX2 (Go twins in points.go)
//	trig4_other.go             the portable build of the same
//	features_amd64.go/.s       the CPUID probe for AVX2 and FMA; features_other.go: none
package engine
