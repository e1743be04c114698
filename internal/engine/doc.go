// Package engine is the contract between the root package geoknn and its
// two engines: the requests and results of a query, the Engine and Session
// interfaces, and the checks every engine applies before it runs. It holds
// no engine: internal/cpu answers on all cores, internal/gpu on NVIDIA
// GPUs; the root package opens one or the other (falling back to the CPU)
// and speaks to it through these types. The spatial indexes and the
// planner both engines share are in internal/index. Nothing here imports
// the CUDA bindings.
//
// Both engines return the float64 answer: the nearest reference by the
// squared chord between unit vectors (monotone in the haversine distance),
// ties to the lowest reference index, and the distance computed in float64
// for the chosen reference. The CPU ranks in float64; the GPU ranks in
// float32 and re-ranks in float64 every observation whose winner is within
// the proven float32 error bound of the runner-up.
//
// # A query's way
//
//  1. The root package builds a Request (observations, references,
//     algorithm, perhaps references Prepared once) and calls
//     Engine.Nearest, KNearest or Within.
//  2. The engine checks it (CheckRequest, CheckK), prepares the references
//     (index.RefSet) and, for the grid algorithm, asks index.PlanGrid
//     for a grid side, the k-d tree or brute force.
//  3. It answers through the plan's index or its face cells into the
//     caller's Result (KResult, WithinResult), and reports Stats.
//
// # Files
//
//	api.go             Algorithm, Request, Prepared, Result, KResult, WithinResult, Stats, Engine, request checks
//	session.go         the Session and Pending interfaces, session options, plans and observation sample
//	session_movers.go  moving references (Movers, Advance) and their checks
package engine
