// Package gpu is the exact nearest-reference engine on NVIDIA GPUs, one
// goroutine a GPU through the CUDA driver API (the cuda bindings, loaded at
// run time). It implements engine.Engine and engine.Session; k nearest
// beyond what the kernels hold goes to the host's cores (internal/cpu).
//
// Each device's thread stages the references once (refs.go), builds the
// grid index on the device (or sends the k-d tree the host built, packed by
// internal/engine) and from it the face cells' candidate lists (cells.go),
// then streams jobs through three slots (stream.go): copy in, rank (through
// the face cells, else sorted by cell for the grid or tree query), copy out,
// the kernels of successive jobs in order while copies overlap. Sessions
// (session.go) keep observations resident instead and send only references
// and replacements. Both run the same query path (query.go). kern_X.go
// wraps the kernels of internal/kernels' X.cu, one typed Go method a kernel.
//
// The tests need a GPU; without one (or without a driver) they skip with a
// one-line reason. The GPU machine runs them from `make bin`'s
// bin/gpu.test (.ci/gpu-check).
//
// # Files
//
//	gpu.go                      GPU: the engine, its devices, the nearest query
//	device.go                   one GPU's context, modules and sizing; DeviceInfo, ListDevices
//	memory.go, host.go          device, managed and pinned buffers; callers' page-locked ranges
//	refs.go                     the references on a GPU
//	query.go                    one query on a stream: sort, rank, answers out, stage times
//	stream.go                   streamed jobs over three slots
//	cells.go                    the face cells' candidate lists on the device: levels, refusal
//	neighbours.go               k nearest and radius queries (knn.cu)
//	session.go, session_movers.go  resident sessions; references moved on the device
//	kern.go, kern_*.go          typed kernel wrappers, one file per .cu
package gpu
