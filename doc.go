// Package geoknn finds, for every observation point on Earth, the nearest
// reference point by great-circle (haversine) distance: exactly, for
// hundreds of millions of observations against tens of thousands of
// references, on every NVIDIA GPU of a host or on all CPU cores.
//
// The answer contract: for every observation the returned reference is at
// most 1 m farther than the true nearest (float64 haversine on a sphere of
// radius EarthRadiusMetres), the reported distance is within 1 m, and ties
// go to the lowest reference index. It holds for every engine and
// algorithm but Seed, the benchmark baseline.
//
// This package is the one door to the engines: everything a caller needs
// is here, as values (Points, Result, Stats, SessionStats, DeviceInfo) and
// the operations on them.
//
//   - GetNearest answers one query on orb.Point slices; GetNearestRadians
//     one on float32 radian columns, read in place.
//   - A Searcher keeps GPU contexts, kernels and buffers between queries;
//     NearestInto fills a caller's Result without allocating.
//   - A Session keeps a fixed set of observations resident for queries
//     against references that move (a simulation's steps).
//
// Points come as orb.Point{lon, lat} in degrees, or as latitude and
// longitude columns in radians (Radians64, Radians32). Package sphere
// generates reproducible synthetic sets, pointio reads and writes files,
// validate checks answers against a float64 brute force, and simulator
// runs moving references through a Session.
//
// With Engine Auto the GPU engine runs when a CUDA driver and a GPU are
// present (the driver is loaded at run time: no cgo), else the CPU engine,
// and Result.Fallback says why.
package geoknn
