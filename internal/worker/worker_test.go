//go:build linux

package worker

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// testPeer is the Python side of a worker served in-process.
type testPeer struct {
	t  *testing.T
	fd int
}

// startWorker serves a worker on one end of a socketpair and returns the
// other; closing it ends the worker, which the cleanup waits for.
func startWorker(t *testing.T) *testPeer {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	w := newWorker(&seqConn{fd: fds[1]}, io.Discard)
	done := make(chan error, 1)
	go func() { done <- w.serve(context.Background()) }()
	t.Cleanup(func() {
		unix.Close(fds[0])
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		unix.Close(fds[1])
	})
	return &testPeer{t: t, fd: fds[0]}
}

// points writes degrees (lat, lon pairs) as the radian columns of a memfd.
func (p *testPeer) points(deg [][2]float64) int {
	n := len(deg)
	fd, err := unix.MemfdCreate("test-points", unix.MFD_CLOEXEC)
	if err != nil {
		p.t.Fatal(err)
	}
	cols := make([]float64, pointsBytes(n)/8)
	lon := lonOffset(n) / 8
	for i, d := range deg {
		cols[i], cols[lon+i] = d[0]*math.Pi/180, d[1]*math.Pi/180
	}
	if _, err := unix.Write(fd, unsafe.Slice((*byte)(unsafe.Pointer(&cols[0])), 8*len(cols))); err != nil {
		p.t.Fatal(err)
	}
	return fd
}

// call sends req (with fds, closed after) and returns the reply and the
// answer's arrays as float64 or int64 by name.
func (p *testPeer) call(req map[string]any, fds ...int) (reply, map[string][]float64) {
	p.t.Helper()
	c := &seqConn{fd: p.fd}
	if err := c.send(req, fds...); err != nil {
		p.t.Fatal(err)
	}
	closeAll(fds)
	m, err := c.recv()
	if err != nil {
		p.t.Fatal(err)
	}
	defer closeAll(m.fds)
	var rep reply
	if err := json.Unmarshal(m.body, &rep); err != nil {
		p.t.Fatal(err)
	}
	return rep, readArrays(p.t, rep, m.fds)
}

func readArrays(t *testing.T, rep reply, fds []int) map[string][]float64 {
	out := map[string][]float64{}
	if len(rep.Arrays) == 0 {
		return out
	}
	var st unix.Stat_t
	unix.Fstat(fds[0], &st)
	mem, err := unix.Mmap(fds[0], 0, int(st.Size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	for _, s := range rep.Arrays {
		n := elements(s.Shape)
		for i := range n {
			b := mem[s.Offset+8*i:]
			v := *(*float64)(unsafe.Pointer(&b[0]))
			if s.Dtype == "<i8" {
				v = float64(*(*int64)(unsafe.Pointer(&b[0])))
			}
			out[s.Name] = append(out[s.Name], v)
		}
	}
	return out
}

var workerRefs = [][2]float64{{48.85, 2.35}, {51.51, -0.13}, {52.52, 13.40}}

func TestWorkerQueries(t *testing.T) {
	p := startWorker(t)
	fit, _ := p.call(map[string]any{"id": 1, "op": "fit", "n": 3, "engine": "cpu"}, p.points(workerRefs))
	if !fit.OK || fit.Index == 0 {
		t.Fatalf("fit: %+v", fit)
	}
	rep, a := p.call(map[string]any{"id": 2, "op": "query", "index": fit.Index, "kind": "knn", "k": 3, "max_m": 300e3, "n": 1},
		p.points([][2]float64{{50, 4}}))
	if !rep.OK || a["index"][0] != 0 || a["index"][2] != -1 || !math.IsInf(a["distance"][2], 1) {
		t.Fatalf("knn: %+v %v", rep, a)
	}
	if d := a["distance"][0]; math.Abs(d-174901.107) > 1 {
		t.Errorf("distance %v m, want 174901.107", d)
	}
	rep, a = p.call(map[string]any{"id": 3, "op": "query", "index": fit.Index, "kind": "list", "radius_m": 400e3, "self": true})
	if !rep.OK || len(a["offsets"]) != 4 || a["count"][0] != 1 || a["index"][0] != 1 {
		t.Fatalf("self list: %+v %v", rep, a)
	}
}

func TestWorkerRefusals(t *testing.T) {
	p := startWorker(t)
	rep, _ := p.call(map[string]any{"id": 1, "op": "fit", "n": 2, "engine": "cpu"}, p.points([][2]float64{{0, 0}, {91, 0}}))
	if rep.OK || rep.Kind != "value" || rep.Row == nil || *rep.Row != 1 || rep.What != "references" {
		t.Fatalf("bad reference: %+v", rep)
	}
	fit, _ := p.call(map[string]any{"id": 2, "op": "fit", "n": 3, "engine": "cpu"}, p.points(workerRefs))
	rep, _ = p.call(map[string]any{"id": 3, "op": "query", "index": fit.Index, "kind": "knn", "k": 4, "n": 1},
		p.points([][2]float64{{0, 0}}))
	if rep.OK || rep.Kind != "value" {
		t.Fatalf("k above the references: %+v", rep)
	}
	// A request cancelled before it runs is answered as cancelled.
	(&seqConn{fd: p.fd}).send(map[string]any{"id": 4, "op": "cancel"})
	rep, _ = p.call(map[string]any{"id": 4, "op": "hello"})
	if rep.OK || rep.Kind != "cancelled" {
		t.Fatalf("cancelled request: %+v", rep)
	}
	if rep, _ = p.call(map[string]any{"id": 5, "op": "hello"}); !rep.OK {
		t.Fatalf("after a cancel: %+v", rep)
	}
}

// TestWorkerAnswerBuffer checks that an answer goes into the buffer a
// request brings (grown to fit, no descriptor sent back) and that a freed
// index is gone.
func TestWorkerAnswerBuffer(t *testing.T) {
	p := startWorker(t)
	fit, _ := p.call(map[string]any{"id": 1, "op": "fit", "n": 3, "engine": "cpu"}, p.points(workerRefs))
	buf, err := unix.MemfdCreate("test-answers", unix.MFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(buf)
	mine, err := unix.Dup(buf)
	if err != nil {
		t.Fatal(err)
	}
	c := &seqConn{fd: p.fd}
	req := map[string]any{"id": 2, "op": "query", "index": fit.Index, "kind": "nearest", "k": 1, "n": 1, "answer": true}
	if err := c.send(req, p.points([][2]float64{{52, 13}}), mine); err != nil {
		t.Fatal(err)
	}
	unix.Close(mine)
	m, err := c.recv()
	if err != nil {
		t.Fatal(err)
	}
	var rep reply
	if err := json.Unmarshal(m.body, &rep); err != nil || !rep.OK || len(m.fds) != 0 {
		t.Fatalf("reply %+v, %d descriptors, %v", rep, len(m.fds), err)
	}
	if a := readArrays(t, rep, []int{buf}); a["index"][0] != 2 {
		t.Errorf("nearest of Berlin: %v, want 2", a["index"])
	}
	(&seqConn{fd: p.fd}).send(map[string]any{"op": "free", "index": fit.Index})
	rep, _ = p.call(map[string]any{"id": 3, "op": "query", "index": fit.Index, "kind": "count", "self": true})
	if rep.OK || rep.Kind != "value" {
		t.Fatalf("query of a freed index: %+v", rep)
	}
}

// A radius list that finds no reference at all (an empty index array)
// answers empty lists: the Python package's radius_neighbors(X, radius=1)
// far from every reference.
func TestWorkerEmptyList(t *testing.T) {
	p := startWorker(t)
	fit, _ := p.call(map[string]any{"id": 1, "op": "fit", "n": 3, "engine": "cpu"}, p.points(workerRefs))
	rep, a := p.call(map[string]any{"id": 2, "op": "query", "index": fit.Index, "kind": "list", "radius_m": 1.0, "n": 2},
		p.points([][2]float64{{50, 4}, {0, 0}}))
	if !rep.OK || len(a["offsets"]) != 3 || a["offsets"][2] != 0 || len(a["index"]) != 0 {
		t.Fatalf("empty list: %+v %v", rep, a)
	}
}
