// Package engines opens the engine a caller asks for and answers what no
// single engine can: it is the one package, tests aside, that names the
// concrete engines (internal/cpu, internal/gpu), so that the root package
// speaks only the contract (internal/engine) and asserts its optional
// interfaces, never an engine's type.
//
// Open chooses: the GPUs when asked for or, on Auto, when a driver and a
// GPU are there, else the CPU, with the reason the GPUs were passed over.
// KNearest answers k above an engine's limit (engine.KLimited) on the CPU
// engine, which gives the same answers. NewLocalIndex prepares references
// for small queries on the calling goroutine. The GPU engine's options
// (MemoryMode), errors and device list are here too, for the root package
// to give its users without importing the GPU engine.
package engines
