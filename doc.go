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
// is here, as values (Points, Result, KResult, WithinResult, Stats,
// SessionStats, DeviceInfo) and the operations on them. Every query takes
// Points and names its distances alike (DistanceRad, and Metres):
//
//   - Nearest, KNearest, WithinCount and WithinList on a Searcher (the
//     references given each call) or an Index (prepared once); NearestInto
//     and KNearestInto fill a caller's result without allocating. The
//     package-level Nearest opens a Searcher for one query.
//     Index.Replaced prepares a changed reference set on an index's
//     engine as a new Index (a new version; the old one answers on).
//   - A Query is any of those questions as one value, for callers that
//     take the kind from their input (flags, a request): Answer answers
//     it on a Searcher or an Index, and its Kind is the answers' kind
//     (stream.AnswerKind) that the answer writers take.
//   - Index.Stream answers a Query (as a StreamQuery) for observations
//     that come in chunks (a file larger than memory: stream.ChunkReader,
//     formats.OpenChunks) into an AnswerSink, reading, querying and
//     writing side by side, in memory set by the chunks, not by the
//     observations.
//   - A Searcher keeps GPU contexts, kernels and buffers between queries.
//   - A Session keeps a fixed set of observations resident for queries
//     against references that move (a simulation's steps).
//
// Points come from orb.Point{lon, lat} in degrees (Degrees, which checks
// them), from latitude and longitude columns in radians read in place
// (Radians64, Radians32), or from a Generator (Generated). Package sphere
// generates reproducible synthetic sets, pointio/formats reads and writes
// files (through a package per format family: csvio, geojsonio, numpyio,
// arrowio), validate checks answers against a float64 brute force, and
// simulator runs moving references through a Session.
//
// Misuse is an error, never a panic: a call after Close returns ErrClosed;
// a nil context or result is refused; k above the number of references is
// refused with both named (CheckK, the command line's rule too).
//
// With Engine Auto the GPU engine runs when a CUDA driver and a GPU are
// present (the driver is loaded at run time: no cgo), else the CPU engine,
// and Result.Fallback says why.
package geoknn
