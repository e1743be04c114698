// Package cpu is the exact nearest-reference engine on all cores of the
// host. It implements engine.Engine and engine.Session: goroutines of one
// team take batches of observations and answer each through the face cells
// (a float64 port of the GPU's cells.cu), the plan's grid index or k-d tree,
// or the AVX2 brute-force scan. Every assembly routine has a portable Go
// twin, which the tests compare bit for bit; built with GOAMD64=v3 (fused
// multiply-adds) the vector paths must still give the scalar answers
// (.ci/run tests that build). It never imports the CUDA bindings.
//
// Beyond engine.Engine it offers CPUIndex, references prepared once and
// queried on the calling goroutine (engine.LocalIndex), and none of the
// optional engine interfaces: it reads and writes the caller's memory in
// place, so nothing is pinned, and Close only lets go of reused memory.
// It answers every k, so it is also where a limited engine's larger k go
// (internal/engines).
package cpu
