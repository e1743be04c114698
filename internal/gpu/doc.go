// Package gpu is the exact nearest-reference engine on NVIDIA GPUs, one
// goroutine a GPU through the CUDA driver API (the cuda bindings, loaded at
// run time). It implements engine.Engine and engine.Session, and every
// optional engine interface (HostPinner, ExitCloser, KLimited); it refuses
// k nearest beyond what the kernels hold (MaxK), which internal/engines
// answers on the CPU engine. It never imports the CPU engine.
//
// Each device's thread stages the references once (refs.go), builds the
// grid index on the device (or sends the k-d tree the host built, packed by
// internal/index) and from it the face cells' candidate lists (cells.go),
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
//	kern.go                     a module's entries and argument blocks; the kernels' parameter types
//	kern_haversine.go           haversine.cu: exact brute force (block_min, global_min, refine)
//	kern_seed.go                seed.cu: the float32 baseline brute-force kernels
//	kern_grid.go                grid.cu: the grid index on the device, the observation sort, the grid query
//	kern_tree.go                tree.cu: the query through the packed k-d tree
//	kern_cells.go               cells.cu: the face cells' lists and query
//	kern_knn.go                 knn.cu: k nearest and radius queries
//	kern_resident.go            resident.cu: sessions' replacements, duplicates, changed answers
//	kern_generate.go            generate.cu: synthetic observations on the device
//	kern_move.go                move.cu: references moved on the device
package gpu
