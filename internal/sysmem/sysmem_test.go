package sysmem

import (
	"bufio"
	"strings"
	"testing"
)

func TestParseMeminfo(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"MemTotal: 100 kB\nMemFree: 50 kB\nMemAvailable:   2048 kB\n", 2 << 20, true},
		{"MemTotal: 100 kB\n", 0, false},
		{"MemAvailable: lots kB\n", 0, false},
	} {
		got, ok := parseMeminfo(bufio.NewScanner(strings.NewReader(tc.in)))
		if got != tc.want || ok != tc.ok {
			t.Errorf("%q: %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	if n, ok := Available(); ok && n == 0 {
		t.Error("this host has no memory available")
	}
}

func TestParseLimits(t *testing.T) {
	if p, ok := cgroupPath("12:cpu:/x\n0::/user.slice/knn.scope\n"); !ok || p != "/user.slice/knn.scope" {
		t.Errorf("cgroupPath = %q, %v", p, ok)
	}
	if _, ok := cgroupPath("4:memory:/x\n"); ok {
		t.Error("a v1 line read as v2")
	}
	if n, ok := parseStatusKB(bufio.NewScanner(strings.NewReader("Name: knn\nVmSize:\t  1024 kB\n")), "VmSize:"); !ok || n != 1<<20 {
		t.Errorf("VmSize = %d, %v", n, ok)
	}
}
