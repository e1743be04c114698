package mpi

import (
	"strings"
	"testing"

	"github.com/geoknn/geoknn/internal/dl"
)

// A library that is not there, or is not MPI, is refused with a message
// that says what to do.
func TestOpenRefuses(t *testing.T) {
	for _, tc := range []struct{ lib, want string }{
		{"/nonexistent/libmpi.so.40", "GEOKNN_MPI_LIB"},
		{"libc.so.6", "lacks MPI_Init_thread"},
	} {
		t.Setenv("GEOKNN_MPI_LIB", tc.lib)
		_, err := Open()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.lib, err, tc.want)
		}
	}
}

// MPICH's handles as its mpi.h defines them (MPICH 3 and 4 alike).
func TestMPICHTable(t *testing.T) {
	a := mpich()
	for _, tc := range []struct {
		name      string
		got, want uintptr
	}{
		{"MPI_COMM_WORLD", a.commWorld, 0x44000000}, {"MPI_INFO_NULL", a.infoNull, 0x1c000000},
		{"MPI_BYTE", a.byteType, 0x4c00010d}, {"MPI_DOUBLE", a.doubleType, 0x4c00080b},
		{"MPI_MAX", a.opMax, 0x58000001}, {"MPI_SUM", a.opSum, 0x58000003}, {"MPI_STATUS_IGNORE", a.statusIgnore, 1},
		{"MPI_COMM_TYPE_SHARED", uintptr(a.commTypeShared), 1}, {"MPI_THREAD_FUNNELED", uintptr(a.threadFunneled), 1},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %#x, want %#x", tc.name, tc.got, tc.want)
		}
	}
}

// Where an MPI library is installed, it loads and says which it is; its
// handles resolve (Open MPI's are symbols).
func TestOpenInstalled(t *testing.T) {
	for _, lib := range []string{"libmpi.so.40", "libmpich.so.12"} {
		t.Run(lib, func(t *testing.T) {
			if _, err := dl.Open(lib); err != nil {
				t.Skipf("%s not installed", lib)
			}
			t.Setenv("GEOKNN_MPI_LIB", lib)
			l, err := Open()
			if err != nil {
				t.Fatal(err)
			}
			if impl := l.Implementation(); impl != "Open MPI" && impl != "MPICH" || l.commWorld == 0 || l.byteType == 0 {
				t.Errorf("%s: %q, world %#x, byte %#x", lib, impl, l.commWorld, l.byteType)
			}
			t.Logf("%s: %s", lib, l.Version())
		})
	}
}
