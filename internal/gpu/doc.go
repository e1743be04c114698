// Package gpu is the exact nearest-reference engine on NVIDIA GPUs, one
// goroutine a GPU through the CUDA driver API (the cuda bindings, loaded at
// run time). It implements engine.Engine and engine.Session, and every
// optional engine interface (HostPinner, ExitCloser, KLimited); it refuses
// k nearest beyond what the kernels hold (MaxK), which internal/engines
// answers on the CPU engine. It never imports the CPU engine.
//
// Each device's thread stages the references once, builds the grid index
// on the device (or sends the k-d tree the host built, packed by
// internal/index) and from it the face cells' candidate lists, then
// streams jobs through slots: copy in, rank (through the face cells, else
// sorted by cell for the grid or tree query), copy out, the kernels of
// successive jobs in order while copies overlap. One job loop
// (jobloop.go, pure Go over the device operations of jobs.go) runs every
// query kind, the nearest (stream.go) and the k nearest and within a
// radius (neighbours.go); the host's copies into and out of the pinned
// staging run on a crew of goroutines (crew.go), the GPU's share of the
// cores, beside the device's work, and check the points as they stage
// them. Points the GPUs copy straight from the caller's page-locked
// columns are checked on the device (valid.go), and a job with a bad one
// is refused with the host's message for it. Sessions keep
// observations resident instead and send only references and
// replacements; both run the same query path. Every kernel of
// internal/kernels has one typed Go wrapper, whose argument block is
// checked against the kernel's PTX parameters (by test, and by every
// setter at launch).
//
// Answers are exact as the contract (internal/engine) defines them: the
// kernels rank in float32 with a proven error bound and re-rank every near
// tie in float64. The seed algorithm, a float32 baseline kept for
// benchmarks, is the one exception.
//
// The tests that need a GPU skip without one (or without a driver) with a
// one-line reason. The GPU machine runs them from `make bin`'s
// bin/gpu.test (.ci/gpu-check).
package gpu
