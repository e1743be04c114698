package ranks

import (
	"bufio"
	"bytes"
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/geoknn/geoknn/mpi"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/arrowio"
	"github.com/geoknn/geoknn/pointio/csvio"
	"github.com/geoknn/geoknn/stream"
)

// Parts of unknown length (Parquet answers, Parquet and CSV rows with
// identifiers) written together by 3 ranks, spilled (room on the disk)
// and counted (none, on one rank's disk or every rank's), are one
// process's file byte for byte: 3 ranks of this test binary run
// TestUnsizedPartsChild.
func TestUnsizedParts(t *testing.T) {
	ran := false
	for _, l := range []struct{ launcher, lib string }{{"mpirun.openmpi", "libmpi.so.40"}, {"mpirun.mpich", "libmpich.so.12"}} {
		path, err := exec.LookPath(l.launcher)
		if err != nil {
			continue
		}
		ran = true
		args := []string{"-np", "3"}
		if l.lib == "libmpi.so.40" {
			args = append([]string{"--oversubscribe", "--allow-run-as-root"}, args...)
		}
		// A collective left unmatched would hang the ranks: bounded.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, path, append(args, os.Args[0], "-test.run", "^TestUnsizedPartsChild$", "-test.v", "-test.timeout", "2m")...)
		cmd.WaitDelay = 10 * time.Second
		cmd.Env = append(os.Environ(), "GEOKNN_MPI_CHILD=1", "GEOKNN_MPI_LIB="+l.lib, "GEOKNN_PARTS_DIR="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil || bytes.Count(out, []byte("--- PASS: TestUnsizedPartsChild")) != 3 {
			t.Errorf("%s: %v\n%s", l.launcher, err, out)
		}
	}
	if !ran {
		t.Skip("no MPI launcher (mpirun): .ci/run installs Open MPI and MPICH")
	}
}

func TestUnsizedPartsChild(t *testing.T) {
	dir := os.Getenv("GEOKNN_PARTS_DIR")
	if os.Getenv("GEOKNN_MPI_CHILD") == "" || dir == "" {
		t.Skip("run by TestUnsizedParts under mpirun")
	}
	runtime.LockOSThread()
	l, err := mpi.Open()
	if err != nil {
		t.Fatal(err)
	}
	world, err := l.Init()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Finalize()
	rank, _ := world.Rank()
	size, _ := world.Size()
	n := 2*arrowio.GroupRows() + 12345 // the last rank's group short
	cases := unsizedCases(n)
	var whole [][]byte
	if rank == 0 {
		for _, c := range cases {
			whole = append(whole, c.whole(t))
		}
	}
	// The ways, from the free bytes each rank sees on the disk (false:
	// unknown): room everywhere, spilled; room nowhere, counted; one rank
	// without room, counted by all; one rank not knowing, spilled.
	for way, w := range []struct {
		free  func(rank int) (uint64, bool)
		spill bool
	}{
		{func(int) (uint64, bool) { return 1 << 62, true }, true},
		{func(int) (uint64, bool) { return 0, true }, false},
		{func(r int) (uint64, bool) { return map[bool]uint64{true: 0, false: 1 << 62}[r == 1], true }, false},
		{func(r int) (uint64, bool) { return 1 << 62, r != 1 }, true},
	} {
		for ci, c := range cases {
			counts := Shares(c.format, n, size)
			lo := Offset(counts, rank)
			o := &Output{World: world, Rank: rank, Size: size, N: n, Format: c.format,
				Path: filepath.Join(dir, strconv.Itoa(way)+"-"+c.name), free: func() (uint64, bool) { return w.free(rank) }}
			if err := o.Write(context.Background(), c.part(lo, counts[rank])); err != nil {
				t.Fatalf("%s, way %d: %v", c.name, way, err)
			}
			if want := c.countable && !w.spill; (o.counted > 0) != want {
				t.Errorf("%s, way %d, rank %d: counted %d parts", c.name, way, rank, o.counted)
			}
			if rank != 0 {
				continue
			}
			got, err := os.ReadFile(o.Path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, whole[ci]) {
				t.Errorf("%s, way %d: %d bytes, one process's %d, not the same", c.name, way, len(got), len(whole[ci]))
			}
		}
	}
}

// unsizedCase is a file of n answers the ranks write in parts, and the
// same file written whole.
type unsizedCase struct {
	name, format string
	countable    bool // counted on a rank whose disk has no room to spill
	part         func(lo, n int) Part
	whole        func(t *testing.T) []byte
}

func unsizedCases(n int) []unsizedCase {
	ref := func(i int) uint32 { return uint32(i*2654435761) >> 16 }
	metres := func(i int) float64 { return float64(i%100003) * 1.37 }
	nearest := func(lo, n int) stream.Answers {
		return stream.Answers{Base: lo, N: n, Nearest: func(i int) (uint32, float64) { return ref(lo + i), metres(lo + i) }}
	}
	fields := []arrow.Field{{Name: "obs_id", Type: arrow.BinaryTypes.String}, {Name: "ref_index", Type: arrow.PrimitiveTypes.Uint32}}
	rows := func(lo, n int) *Rows {
		return &Rows{Fields: fields, N: n,
			Values: func(i int, add func(...any)) { add("o"+strconv.Itoa(lo+i), ref(lo+i)) },
			Text: func(i int, add func(...string)) {
				add("o"+strconv.Itoa(lo+i), strconv.FormatUint(uint64(ref(lo+i)), 10))
			}}
	}
	return []unsizedCase{
		{"answers.parquet", pointio.FormatParquet, true, func(lo, n int) Part { return NearestPart(nearest(lo, n), lo) },
			func(t *testing.T) []byte {
				var b bytes.Buffer
				w, err := arrowio.NewAnswerWriter(&b, pointio.FormatParquet, stream.KindNearest, 1, arrowio.StreamOptions{})
				if err == nil {
					err = w.Write(nearest(0, n))
				}
				return closed(t, &b, w, err)
			}},
		{"rows.parquet", pointio.FormatParquet, false, func(lo, n int) Part { return Part{Rows: rows(lo, n)} },
			func(t *testing.T) []byte {
				var b bytes.Buffer
				w, err := arrowio.NewRowsWriter(&b, pointio.FormatParquet, fields, arrowio.StreamOptions{})
				if err == nil {
					err = w.Write(n, rows(0, n).Values)
				}
				return closed(t, &b, w, err)
			}},
		{"rows.csv", pointio.FormatCSV, false, func(lo, n int) Part { return Part{Rows: rows(lo, n)} },
			func(t *testing.T) []byte {
				var b bytes.Buffer
				bw := bufio.NewWriter(&b)
				w := csvio.NewRowsWriter(bw, []string{"obs_id", "ref_index"})
				return closed(t, &b, w, w.Write(n, rows(0, n).Text))
			}},
	}
}

// closed is b once w is closed, after err (the writing's).
func closed(t *testing.T, b *bytes.Buffer, w interface{ Close() error }, err error) []byte {
	t.Helper()
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The ranks spill where every rank's disk holds every part and the
// spilled ones, parts of any size, and count where one does not; unknown
// free space is room. The estimate of a part is at least what its
// answers take as Parquet.
func TestSpillsWhereRoom(t *testing.T) {
	for _, c := range []struct {
		estFree []int64
		spill   bool
	}{
		{[]int64{1000, 3000, 1000, 3000}, true},
		{[]int64{1000, 3000, 1000, 2999}, false},
		{[]int64{2700, 4700, 1000, 4700}, true}, // rank 1's part spilled: 2700 + 2 x 1000
		{[]int64{1000, 4700, 2700, 4700}, false},
		{[]int64{1000, -1, 1000, 3000}, true},
		{[]int64{1000, -1, 1000, -1}, true},
		{[]int64{1000, 1000}, true},
		{[]int64{1000, 999}, false},
	} {
		if got := roomToSpill(c.estFree); got != c.spill {
			t.Errorf("estimates and free bytes %v: spill %v, want %v", c.estFree, got, c.spill)
		}
	}
	// References over the whole uint32 range, distances with random low
	// bytes: the costliest answers to pack.
	n := 3*arrowio.GroupRows() + 17
	mix := func(i int) uint64 { // splitmix64's finalizer
		z := uint64(i)*0x9E3779B97F4A7C15 + 1
		z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
		z = (z ^ z>>27) * 0x94D049BB133111EB
		return z ^ z>>31
	}
	ref := func(i int) uint32 { return uint32(mix(i)) }
	metres := func(i int) float64 { return math.Float64frombits(0x4100000000000000 | mix(i)>>12) }
	for _, p := range []Part{
		NearestPart(stream.Answers{N: n, Nearest: func(i int) (uint32, float64) { return ref(i), metres(i) }}, 0),
		KPart(stream.Answers{N: n, KRow: func(i, r int) (uint32, float64, bool) { return ref(8*i + r), metres(8*i + r), true }}, 8, 0),
	} {
		var b bytes.Buffer
		w, err := arrowio.NewAnswerWriter(&b, pointio.FormatParquet, p.Kind, p.K, arrowio.StreamOptions{})
		if err == nil {
			err = w.Write(p.Answers)
		}
		if err == nil {
			err = w.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
		if est := parquetAnswerBytes(p); int64(b.Len()) > est {
			t.Errorf("%d answers of kind %d took %d bytes as Parquet, estimated %d", n, p.Kind, b.Len(), est)
		}
	}
	if free, ok := statFree(t.TempDir()); runtime.GOOS == "linux" && (!ok || free == 0) {
		t.Errorf("free bytes of a temporary folder: %d, %v", free, ok)
	}
}
