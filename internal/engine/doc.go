// Package engine is the contract between the root package geoknn and its
// two engines: the requests and results of a query, the Engine and Session
// interfaces, what an engine may offer beyond queries, and the checks every
// engine applies before it runs. It holds no engine: internal/cpu answers
// on all cores, internal/gpu on NVIDIA GPUs, and internal/engines opens one
// or the other (falling back to the CPU); the root package speaks to
// either through these types alone. The spatial indexes and the planner
// both engines share are in internal/index.
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
// # Beyond queries
//
// An engine may offer more than Engine, each as a small interface the
// caller asserts (never an engine's concrete type), and does without where
// it does not: HostPinner (copies straight from and into the caller's
// page-locked memory), ExitCloser (a close that leaves the engine's
// resources to the process's exit) and KLimited (k nearest answered up to
// a limit, larger k left to the caller, which answers it on the CPU
// engine). The GPU engine offers all three, the CPU engine none. A
// LocalIndex is references prepared once and queried on the calling
// goroutine, for queries too small to hand to an engine.
package engine
