// Package kernels holds geoknn's CUDA kernels: each .cu beside this file
// (one concern a file, sphere.cuh the geometry they share) and the PTX that
// nvcc built from it (build.sh, `make ptx`), embedded so that the Go binary
// needs no CUDA toolkit. The driver JIT-compiles the PTX for whatever GPU it
// finds (compute capability 8.0 and newer).
//
// The contract between the .cu and the Go side is checked by tests that
// need no GPU: every PTX file starts with the SHA-256 of the sources it was
// built from (a .cu changed without its PTX fails); every kernel entry's
// parameter list matches the signature its Go wrapper fills (internal/gpu
// holds that table, in cuda.Param, and its test; every setter checks it
// again at launch); and the launch constants (block sizes, NO_ANSWER,
// sizeof(ObsRec)) match their #defines.
//
// The CPU engine and internal/index import this package for those
// constants, so it imports no CUDA binding.
package kernels
