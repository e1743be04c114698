package mpi

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"unsafe"

	"github.com/geoknn/geoknn/internal/dl"
)

// call calls the MPI function fn; MPI returns a C int.
//
//go:uintptrescapes
func call(fn uintptr, args ...uintptr) int { return int(int32(dl.Call(fn, args...))) }

// Lib is a loaded MPI library.
type Lib struct {
	abi
	version string
	fn      map[string]uintptr
	cuda    bool // MPIX_Query_cuda_support said yes
}

// libNames are tried in order when GEOKNN_MPI_LIB names none.
var libNames = []string{"libmpi.so.40", "libmpich.so.12", "libmpi.so.12", "libmpi.so"}

// functions are the MPI calls geoknn makes.
var functions = []string{"MPI_Init_thread", "MPI_Initialized", "MPI_Finalize", "MPI_Abort", "MPI_Comm_rank",
	"MPI_Comm_size", "MPI_Comm_split_type", "MPI_Comm_free", "MPI_Bcast", "MPI_Gatherv", "MPI_Scatterv",
	"MPI_Allreduce", "MPI_Allgather", "MPI_Send", "MPI_Recv", "MPI_Get_library_version", "MPI_Error_string", "MPI_Get_processor_name"}

// Open loads the MPI library: GEOKNN_MPI_LIB (a file name or path), else
// the first of libmpi.so.40 (Open MPI), libmpich.so.12, libmpi.so.12
// (MPICH) that loads.
func Open() (*Lib, error) {
	names := libNames
	if env := os.Getenv("GEOKNN_MPI_LIB"); env != "" {
		names = []string{env}
	}
	var errs []error
	for _, name := range names {
		h, err := dl.Open(name)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		return bind(h, name)
	}
	return nil, fmt.Errorf("mpi: no MPI library found (set GEOKNN_MPI_LIB to its path): %w", errors.Join(errs...))
}

// bind looks up the calls and the implementation's handles.
func bind(h uintptr, name string) (*Lib, error) {
	l := &Lib{fn: map[string]uintptr{}}
	for _, f := range functions {
		if l.fn[f] = dl.Sym(h, f); l.fn[f] == 0 {
			return nil, fmt.Errorf("mpi: %s lacks %s", name, f)
		}
	}
	buf := make([]byte, 8192) // MPI_MAX_LIBRARY_VERSION_STRING is 256 (MPICH 8192)
	var n int32
	if rc := call(l.fn["MPI_Get_library_version"], uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&n))); rc != 0 {
		return nil, fmt.Errorf("mpi: %s: MPI_Get_library_version failed (%d)", name, rc)
	}
	// The first line, up to Open MPI's ", package: ..." detail.
	l.version = strings.TrimSpace(strings.SplitN(strings.SplitN(string(buf[:max(0, min(int(n), len(buf)))]), "\n", 2)[0], ",", 2)[0])
	switch {
	case strings.Contains(l.version, "Open MPI"):
		a, err := openMPI(func(s string) uintptr { return dl.Sym(h, s) })
		if err != nil {
			return nil, fmt.Errorf("mpi: %s: %w", name, err)
		}
		l.abi = a
	case strings.Contains(l.version, "MPICH"), strings.Contains(l.version, "Intel(R) MPI"), strings.Contains(l.version, "MVAPICH"):
		l.abi = mpich()
	default:
		return nil, fmt.Errorf("mpi: %s is %q: geoknn knows the ABIs of Open MPI and MPICH (and MPICH's derivatives)", name, l.version)
	}
	l.fn["MPIX_Query_cuda_support"] = dl.Sym(h, "MPIX_Query_cuda_support") // optional; asked after Init
	return l, nil
}

// Version is the library's own description (MPI_Get_library_version's
// first line).
func (l *Lib) Version() string { return l.version }

// Implementation is "Open MPI" or "MPICH".
func (l *Lib) Implementation() string { return l.name }

// CUDAAware reports whether the library said, after Init, that it takes
// device memory (MPIX_Query_cuda_support).
func (l *Lib) CUDAAware() bool { return l.cuda }

// check turns an MPI return code into an error.
func (l *Lib) check(what string, rc int) error {
	if rc == 0 {
		return nil
	}
	buf := make([]byte, 1024) // MPI_MAX_ERROR_STRING
	var n int32
	if call(l.fn["MPI_Error_string"], uintptr(rc), uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&n))) == 0 && n > 0 {
		return fmt.Errorf("mpi: %s: %s", what, buf[:min(int(n), len(buf))])
	}
	return fmt.Errorf("mpi: %s: error %d", what, rc)
}

// Init initializes MPI (MPI_Init_thread, asking for MPI_THREAD_FUNNELED)
// and returns the world communicator. The calling goroutine must stay
// locked to its OS thread and make every later call.
func (l *Lib) Init() (Comm, error) {
	var provided int32
	rc := call(l.fn["MPI_Init_thread"], 0, 0, uintptr(l.threadFunneled), uintptr(unsafe.Pointer(&provided)))
	if err := l.check("MPI_Init_thread", rc); err != nil {
		return Comm{}, err
	}
	if int(provided) < l.threadFunneled {
		return Comm{}, fmt.Errorf("mpi: the library grants thread level %d, geoknn needs MPI_THREAD_FUNNELED", provided)
	}
	if q := l.fn["MPIX_Query_cuda_support"]; q != 0 {
		l.cuda = call(q) == 1
	}
	return Comm{l: l, h: l.commWorld, chunk: maxChunk}, nil
}

// Finalize ends MPI.
func (l *Lib) Finalize() error { return l.check("MPI_Finalize", call(l.fn["MPI_Finalize"])) }

// ProcessorName is this process's host as MPI names it.
func (l *Lib) ProcessorName() (string, error) {
	buf := make([]byte, 256) // MPI_MAX_PROCESSOR_NAME
	var n int32
	if err := l.check("MPI_Get_processor_name", call(l.fn["MPI_Get_processor_name"], uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&n)))); err != nil {
		return "", err
	}
	return string(buf[:max(0, min(int(n), len(buf)))]), nil
}

// Comm is a communicator.
type Comm struct {
	l     *Lib
	h     uintptr
	chunk int // the most bytes one call moves (maxChunk; less in tests)
}

// Rank is this process's rank in c.
func (c Comm) Rank() (int, error) {
	var r int32
	return int(r), c.l.check("MPI_Comm_rank", call(c.l.fn["MPI_Comm_rank"], c.h, uintptr(unsafe.Pointer(&r))))
}

// Size is the number of processes in c.
func (c Comm) Size() (int, error) {
	var n int32
	return int(n), c.l.check("MPI_Comm_size", call(c.l.fn["MPI_Comm_size"], c.h, uintptr(unsafe.Pointer(&n))))
}

// SplitShared is the communicator of the processes of c that share this
// one's node (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED); Free it.
func (c Comm) SplitShared() (Comm, error) {
	var h uintptr // MPICH writes 4 bytes of it, Open MPI 8
	rc := call(c.l.fn["MPI_Comm_split_type"], c.h, uintptr(c.l.commTypeShared), 0, c.l.infoNull, uintptr(unsafe.Pointer(&h)))
	return Comm{l: c.l, h: h, chunk: c.chunk}, c.l.check("MPI_Comm_split_type", rc)
}

// Free releases a communicator made by SplitShared.
func (c Comm) Free() error {
	h := c.h
	return c.l.check("MPI_Comm_free", call(c.l.fn["MPI_Comm_free"], uintptr(unsafe.Pointer(&h))))
}

// Abort ends every process of c's job with code; it does not return when
// MPI works.
func (c Comm) Abort(code int) error {
	return c.l.check("MPI_Abort", call(c.l.fn["MPI_Abort"], c.h, uintptr(code)))
}

// maxChunk is the most bytes one call moves: MPI counts are C ints.
const maxChunk = 1 << 30

// Bcast sends root's buf to every process's buf (equal lengths).
func (c Comm) Bcast(buf []byte, root int) error {
	return c.inChunks("MPI_Bcast", buf, func(p unsafe.Pointer, n int) int {
		return call(c.l.fn["MPI_Bcast"], uintptr(p), uintptr(n), c.l.byteType, uintptr(root), c.h)
	})
}

// Send sends buf to rank dest with tag, in messages of at most maxChunk
// bytes; the receiver calls Recv with a buffer of the same length.
func (c Comm) Send(buf []byte, dest, tag int) error {
	return c.inChunks("MPI_Send", buf, func(p unsafe.Pointer, n int) int {
		return call(c.l.fn["MPI_Send"], uintptr(p), uintptr(n), c.l.byteType, uintptr(dest), uintptr(tag), c.h)
	})
}

// Recv receives into buf what rank src sends with tag (Send).
func (c Comm) Recv(buf []byte, src, tag int) error {
	return c.inChunks("MPI_Recv", buf, func(p unsafe.Pointer, n int) int {
		return call(c.l.fn["MPI_Recv"], uintptr(p), uintptr(n), c.l.byteType, uintptr(src), uintptr(tag), c.h,
			c.l.statusIgnore)
	})
}

// inChunks calls fn on buf in pieces of at most c.chunk bytes (counts are C
// ints), checking each return code as the call named.
func (c Comm) inChunks(name string, buf []byte, fn func(p unsafe.Pointer, n int) int) error {
	for off := 0; off < len(buf); off += c.chunk {
		if err := c.l.check(name, fn(unsafe.Pointer(&buf[off]), min(c.chunk, len(buf)-off))); err != nil {
			return err
		}
	}
	return nil
}

// MaxFloat64 is the largest of every process's v (MPI_Allreduce, MPI_MAX).
func (c Comm) MaxFloat64(v float64) (float64, error) {
	out := v
	rc := call(c.l.fn["MPI_Allreduce"], uintptr(unsafe.Pointer(&v)), uintptr(unsafe.Pointer(&out)), 1, c.l.doubleType,
		c.l.opMax, c.h)
	return out, c.l.check("MPI_Allreduce", rc)
}

// SumFloat64 is the sum of every process's v (MPI_Allreduce, MPI_SUM).
func (c Comm) SumFloat64(v float64) (float64, error) {
	out := v
	rc := call(c.l.fn["MPI_Allreduce"], uintptr(unsafe.Pointer(&v)), uintptr(unsafe.Pointer(&out)), 1, c.l.doubleType,
		c.l.opSum, c.h)
	return out, c.l.check("MPI_Allreduce", rc)
}

// SumFloat64s is the element-wise sum of every process's v (each the same
// length), at every process (MPI_Allreduce, MPI_SUM): a step's counts.
func (c Comm) SumFloat64s(v []float64) ([]float64, error) { return c.allreduce(v, c.l.opSum) }

// MaxFloat64s is the element-wise largest of every process's v (each the
// same length), at every process: a step's slowest times.
func (c Comm) MaxFloat64s(v []float64) ([]float64, error) { return c.allreduce(v, c.l.opMax) }

func (c Comm) allreduce(v []float64, op uintptr) ([]float64, error) {
	out := make([]float64, len(v))
	if len(v) == 0 {
		return out, nil
	}
	rc := call(c.l.fn["MPI_Allreduce"], uintptr(unsafe.Pointer(&v[0])), uintptr(unsafe.Pointer(&out[0])), uintptr(len(v)),
		c.l.doubleType, op, c.h)
	return out, c.l.check("MPI_Allreduce", rc)
}

// AllgatherInt64 is every process's v (each the same length), in rank
// order, at every process (MPI_Allgather): the ranks' sizes and
// offsets, say.
func (c Comm) AllgatherInt64(v []int64) ([]int64, error) {
	n, err := c.Size()
	if err != nil {
		return nil, err
	}
	out := make([]int64, n*len(v))
	if len(v) == 0 {
		return out, nil
	}
	rc := call(c.l.fn["MPI_Allgather"], uintptr(unsafe.Pointer(&v[0])), uintptr(8*len(v)), c.l.byteType,
		uintptr(unsafe.Pointer(&out[0])), uintptr(8*len(v)), c.l.byteType, c.h)
	return out, c.l.check("MPI_Allgather", rc)
}

// Gatherv gathers each process's send (counts[rank] bytes: every process
// passes the same counts) into root's recv, in rank order. Large gathers go
// in rounds of at most maxChunk bytes a process, through a buffer of root's.
func (c Comm) Gatherv(send []byte, counts []int, recv []byte, root int) error {
	return c.rounds(counts, root, func(me, from int, part []int, tmp []byte, displs []int32, sizes []int32) error {
		var sp unsafe.Pointer
		if part[me] > 0 {
			sp = unsafe.Pointer(&send[from])
		}
		var tp unsafe.Pointer
		if len(tmp) > 0 {
			tp = unsafe.Pointer(&tmp[0])
		}
		rc := call(c.l.fn["MPI_Gatherv"], uintptr(sp), uintptr(part[me]), c.l.byteType, uintptr(tp),
			uintptr(unsafe.Pointer(&sizes[0])), uintptr(unsafe.Pointer(&displs[0])), c.l.byteType, uintptr(root), c.h)
		if err := c.l.check("MPI_Gatherv", rc); err != nil {
			return err
		}
		if me == root {
			for r, n := range part {
				copy(recv[offset(counts, r)+from:], tmp[displs[r]:int(displs[r])+n])
			}
		}
		return nil
	})
}

// Scatterv sends root's send, counts[r] bytes to rank r in rank order,
// into each process's recv (every process passes the same counts).
func (c Comm) Scatterv(send []byte, counts []int, recv []byte, root int) error {
	return c.rounds(counts, root, func(me, from int, part []int, tmp []byte, displs []int32, sizes []int32) error {
		if me == root {
			for r, n := range part {
				copy(tmp[displs[r]:int(displs[r])+n], send[offset(counts, r)+from:])
			}
		}
		var rp, tp unsafe.Pointer
		if part[me] > 0 {
			rp = unsafe.Pointer(&recv[from])
		}
		if len(tmp) > 0 {
			tp = unsafe.Pointer(&tmp[0])
		}
		rc := call(c.l.fn["MPI_Scatterv"], uintptr(tp), uintptr(unsafe.Pointer(&sizes[0])),
			uintptr(unsafe.Pointer(&displs[0])), c.l.byteType, uintptr(rp), uintptr(part[me]), c.l.byteType,
			uintptr(root), c.h)
		return c.l.check("MPI_Scatterv", rc)
	})
}

// rounds runs fn for each round of a gather or scatter of counts: each
// rank's bytes [from, from+part[r]), at most maxChunk/ranks of them so that
// root's buffer tmp (and the displacements, C ints) stay below maxChunk.
func (c Comm) rounds(counts []int, root int, fn func(me, from int, part []int, tmp []byte, displs, sizes []int32) error) error {
	me, err := c.Rank()
	if err != nil {
		return err
	}
	most := 0
	for _, n := range counts {
		most = max(most, n)
	}
	chunk := max(1, c.chunk/max(1, len(counts)))
	part := make([]int, len(counts))
	displs, sizes := make([]int32, len(counts)), make([]int32, len(counts))
	for from := 0; from == 0 || from < most; from += chunk {
		total := 0
		for r, n := range counts {
			part[r] = max(0, min(chunk, n-from))
			displs[r], sizes[r] = int32(total), int32(part[r])
			total += part[r]
		}
		var tmp []byte
		if me == root {
			tmp = make([]byte, total)
		}
		if err := fn(me, from, part, tmp, displs, sizes); err != nil {
			return err
		}
	}
	return nil
}

// offset is where rank r's bytes start: the sum of the counts before it.
func offset(counts []int, r int) int {
	at := 0
	for _, n := range counts[:r] {
		at += n
	}
	return at
}
