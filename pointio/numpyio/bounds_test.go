package numpyio

import (
	"archive/zip"
	"encoding/binary"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/geoknn/geoknn/pointio"
)

// allocatedDuring is the bytes f allocates.
func allocatedDuring(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// npzOf writes an archive of members (name, shape, data values).
func npzOf(t *testing.T, members ...struct {
	name, shape string
	n           int
}) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "a.npz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, m := range members {
		w, err := zw.Create(m.name + ".npy")
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, npyHeaderShape("<f8", m.shape))
		for i := range m.n {
			binary.Write(w, binary.LittleEndian, math.Float64bits(float64(i%80)))
		}
	}
	zw.Close()
	f.Close()
	return path
}

// An archive's members are checked against each other and against the
// zip directory's sizes before either is allocated.
func TestNPZMembersCheckedFirst(t *testing.T) {
	type m = struct {
		name, shape string
		n           int
	}
	for _, tc := range []struct {
		members []m
		want    string
	}{
		{[]m{{"lat", "(536870912,)", 4}, {"lon", "(536870912,)", 0}}, "more than the archive's"},
		{[]m{{"lat", "(10,)", 10}, {"lon", "(11,)", 11}}, "10 latitudes and 11 longitudes"},
		{[]m{{"lat", "(3,)", 3}, {"lon", "(536870912,)", 3}}, "lon: the header declares 536870912 values"},
	} {
		path := npzOf(t, tc.members...)
		var err error
		alloc := allocatedDuring(func() { _, err = ReadNPZFile(path, pointio.ReadOptions{}) })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.members, err, tc.want)
		}
		if alloc > 64<<20 {
			t.Errorf("%v: %d MiB allocated before refusing", tc.members, alloc>>20)
		}
	}
}

// A header naming shape twice takes the last, as NumPy does.
func TestNPYDuplicateShapeKey(t *testing.T) {
	a, err := parseNPYHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (9, 2), 'shape': (3, 2), }")
	if err != nil || len(a.shape) != 2 || a.shape[0] != 3 {
		t.Fatalf("shape %v, %v: want the last, (3, 2)", a.shape, err)
	}
}
