// Package mpi runs geoknn across processes and hosts with the MPI library
// the cluster already has, loaded at run time: no cgo, and a binary that
// runs without MPI installed until --mpi asks for it.
//
// Open finds the library (GEOKNN_MPI_LIB, else Open MPI's libmpi.so.40,
// then MPICH's libmpich.so.12 or libmpi.so.12) and asks it which
// implementation it is (MPI_Get_library_version): Open MPI's handles are the
// addresses of objects it exports (ompi_mpi_comm_world, ...), MPICH's are
// integer constants, and the package holds a table of each. Any other
// library is refused with a clear message.
//
// MPI's threading contract: Init asks for MPI_THREAD_FUNNELED, so every call
// must come from the goroutine that called Init, locked to its OS thread
// (runtime.LockOSThread) for the whole run. Errors are returned, never
// ignored; Abort ends every process of the job.
package mpi
