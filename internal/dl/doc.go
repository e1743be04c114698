// Package dl loads C libraries at run time through
// github.com/ebitengine/purego, so that the bindings built on it (cuda/ for
// the CUDA driver, mpi/ for MPI) need no cgo and a binary without the
// library still builds and runs. Every function the bindings call takes
// integers and pointers only, which purego passes in integer registers and
// stack slots exactly as the C ABI does.
package dl
