package mpi

import "fmt"

// abi holds the handles and constants of one MPI implementation.
type abi struct {
	name                 string
	commWorld, infoNull  uintptr
	byteType, doubleType uintptr
	opMax, opSum         uintptr
	statusIgnore         uintptr // MPI_STATUS_IGNORE
	commTypeShared       int
	threadFunneled       int
}

// openMPI resolves Open MPI's predefined handles: the addresses of the
// objects its mpi.h macros take (OMPI_PREDEFINED_GLOBAL).
func openMPI(sym func(string) uintptr) (abi, error) {
	a := abi{name: "Open MPI", commTypeShared: 0, threadFunneled: 1}
	for _, h := range []struct {
		dst  *uintptr
		name string
	}{
		{&a.commWorld, "ompi_mpi_comm_world"}, {&a.infoNull, "ompi_mpi_info_null"},
		{&a.byteType, "ompi_mpi_byte"}, {&a.doubleType, "ompi_mpi_double"},
		{&a.opMax, "ompi_mpi_op_max"}, {&a.opSum, "ompi_mpi_op_sum"},
	} {
		if *h.dst = sym(h.name); *h.dst == 0 {
			return abi{}, fmt.Errorf("Open MPI library without the symbol %s", h.name)
		}
	}
	return a, nil
}

// mpich is MPICH's ABI (and that of the libraries built on it: Intel MPI,
// MVAPICH, Cray MPICH): integer handles, from its mpi.h.
func mpich() abi {
	return abi{name: "MPICH", commWorld: 0x44000000, infoNull: 0x1c000000, byteType: 0x4c00010d,
		doubleType: 0x4c00080b, opMax: 0x58000001, opSum: 0x58000003, statusIgnore: 1, commTypeShared: 1, threadFunneled: 1}
}
