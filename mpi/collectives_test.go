package mpi

import (
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"testing"
)

// The collectives under a real launcher, with calls cut to 7 bytes so that
// every chunked path (Bcast, Send/Recv, the rounds of Gatherv and
// Scatterv, uneven and empty shares) runs many times: 3 ranks of this test
// binary run TestCollectivesChild.
func TestCollectives(t *testing.T) {
	for _, l := range []struct{ launcher, lib string }{{"mpirun.openmpi", "libmpi.so.40"}, {"mpirun.mpich", "libmpich.so.12"}} {
		path, err := exec.LookPath(l.launcher)
		if err != nil {
			t.Logf("%s: not installed", l.launcher)
			continue
		}
		args := []string{"-np", "3"}
		if l.lib == "libmpi.so.40" {
			args = append([]string{"--oversubscribe", "--allow-run-as-root"}, args...)
		}
		cmd := exec.Command(path, append(args, os.Args[0], "-test.run", "^TestCollectivesChild$", "-test.v")...)
		cmd.Env = append(os.Environ(), "GEOKNN_MPI_CHILD=1", "GEOKNN_MPI_LIB="+l.lib)
		out, err := cmd.CombinedOutput()
		if err != nil || bytes.Count(out, []byte("--- PASS: TestCollectivesChild")) != 3 {
			t.Errorf("%s: %v\n%s", l.launcher, err, out)
		}
	}
}

func TestCollectivesChild(t *testing.T) {
	if os.Getenv("GEOKNN_MPI_CHILD") == "" {
		t.Skip("run by TestCollectives under mpirun")
	}
	runtime.LockOSThread()
	l, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	c, err := l.Init()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Finalize()
	c.chunk = 7
	me, _ := c.Rank()
	n, _ := c.Size()
	fill := func(b []byte, seed int) []byte {
		for i := range b {
			b[i] = byte(seed*31 + i)
		}
		return b
	}
	buf := make([]byte, 100)
	if me == 0 {
		fill(buf, 5)
	}
	must(t, c.Bcast(buf, 0))
	if !bytes.Equal(buf, fill(make([]byte, 100), 5)) {
		t.Error("Bcast")
	}
	counts := []int{23, 0, 40}[:n]
	want := []byte{}
	for r, k := range counts {
		want = append(want, fill(make([]byte, k), r)...)
	}
	var all []byte
	if me == 0 {
		all = make([]byte, len(want))
	}
	must(t, c.Gatherv(fill(make([]byte, counts[me]), me), counts, all, 0))
	if me == 0 && !bytes.Equal(all, want) {
		t.Errorf("Gatherv: %v, want %v", all, want)
	}
	got := make([]byte, counts[me])
	must(t, c.Scatterv(all, counts, got, 0))
	if !bytes.Equal(got, fill(make([]byte, counts[me]), me)) {
		t.Errorf("Scatterv: rank %d got %v", me, got)
	}
	if me == 1 {
		must(t, c.Send(fill(make([]byte, 50), 9), 0, 3))
	}
	if me == 0 {
		in := make([]byte, 50)
		must(t, c.Recv(in, 1, 3))
		if !bytes.Equal(in, fill(make([]byte, 50), 9)) {
			t.Error("Send/Recv")
		}
	}
	if top, err := c.MaxFloat64(float64(me)); err != nil || top != float64(n-1) {
		t.Errorf("MaxFloat64 = %v, %v", top, err)
	}
	if total, err := c.SumFloat64(1); err != nil || total != float64(n) {
		t.Errorf("SumFloat64 = %v, %v", total, err)
	}
	if v, err := c.SumFloat64s([]float64{1, float64(me)}); err != nil || v[0] != float64(n) || v[1] != float64(n*(n-1)/2) {
		t.Errorf("SumFloat64s = %v, %v", v, err)
	}
	if v, err := c.MaxFloat64s([]float64{float64(-me), float64(me)}); err != nil || v[0] != 0 || v[1] != float64(n-1) {
		t.Errorf("MaxFloat64s = %v, %v", v, err)
	}
	if all, err := c.AllgatherInt64([]int64{int64(me), int64(10 * me)}); err != nil || len(all) != 2*n || all[2*(n-1)+1] != int64(10*(n-1)) {
		t.Errorf("AllgatherInt64 = %v, %v", all, err)
	}
	// Strings, some empty, some longer than the chunk of 7 bytes.
	names := []string{"Zürich", "", "Lagos", "São Paulo de Olivença", "", "x", "Wellington", "東京"}
	var sent []string
	if me == 0 {
		sent = names
	}
	if got, err := c.BcastStrings(sent, 0); err != nil || !slices.Equal(got, names) {
		t.Errorf("BcastStrings: %q, %v", got, err)
	}
	shares := []int{3, 0, 5}[:n]
	shares[n-1] += len(names) - sum(shares)
	lo := sum(shares[:me])
	if got, err := c.ScatterStrings(sent, shares, 0); err != nil || !slices.Equal(got, names[lo:lo+shares[me]]) {
		t.Errorf("ScatterStrings: rank %d got %q, %v", me, got, err)
	}
}

func sum(counts []int) int {
	s := 0
	for _, k := range counts {
		s += k
	}
	return s
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
