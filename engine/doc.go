// Package engine computes, for every observation, the nearest reference on
// the sphere by great-circle distance: exactly, on the CPU (all cores) or on
// NVIDIA GPUs (one goroutine per GPU through the CUDA driver API).
//
// Both engines rank candidates by the squared chord between unit vectors,
// which is monotone in the haversine distance. The CPU ranks in float64; the
// GPU ranks in float32 and re-ranks in float64 every observation whose
// winner is within the proven float32 error bound of the runner-up, so both
// return the float64 answer, ties to the lowest reference index, and the
// distance computed in float64 for the chosen reference.
//
// Points enter as latitude/longitude columns in radians (Points); the root
// package geoknn converts orb.Point slices to these.
//
// Engine.Nearest streams a query's observations through the GPUs in jobs. A
// Session (Sessioner.NewSession) instead keeps a fixed set of observations
// resident, for queries repeated against changing references: on the GPUs
// the observations, their unit vectors, their order by grid cell and the
// previous answers stay in device memory, and each query sends only the
// references, builds the grid index on the device, and returns the count of
// changed answers (and the answers themselves when asked).
package engine
