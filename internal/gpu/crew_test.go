package gpu

import (
	"errors"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/enginetest"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/memcopy"
	"github.com/geoknn/geoknn/internal/partition"
)

// A crew runs every block once, up to a failed one at least, and names
// the lowest failed block's error, for copies started from several
// goroutines at once.
func TestCrewRunsEveryBlockOnce(t *testing.T) {
	for _, crew := range []*hostCrew{nil, newHostCrew(1), newHostCrew(5)} {
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				n := 1000 + 37*g
				hits := make([]int32, n)
				var mu sync.Mutex
				err := crew.run(n, 64, func(lo, hi int) error {
					mu.Lock()
					defer mu.Unlock()
					for i := lo; i < hi; i++ {
						hits[i]++
					}
					if lo >= 512 {
						return errors.New(strings.Repeat("x", lo))
					}
					return nil
				})
				if err == nil || len(err.Error()) != 512 {
					t.Errorf("error %v, want the block at 512's", err)
				}
				for i, h := range hits {
					// Blocks after a failed one may be left undone.
					if h > 1 || h == 0 && i < 512+64 {
						t.Errorf("item %d of %d run %d times", i, n, h)
						return
					}
				}
			})
		}
		wg.Wait()
		crew.close()
	}
}

// copyAll and streamAll move every byte of every copy, whatever its size
// against copyBlock.
func TestCrewCopyAll(t *testing.T) {
	crew := newHostCrew(3)
	defer crew.close()
	for _, copyAll := range []func([]hostCopy){crew.copyAll, crew.streamAll} {
		testCrewCopies(t, copyAll)
	}
}

func testCrewCopies(t *testing.T, copyAll func([]hostCopy)) {
	sizes := []int{0, 1, copyBlock - 1, copyBlock, 3*copyBlock + 5}
	var copies []hostCopy
	var srcs, dsts [][]byte
	for k, n := range sizes {
		src, dst := make([]byte, n+1), make([]byte, n+1)
		for i := range src {
			src[i] = byte(i*7 + k)
		}
		srcs, dsts = append(srcs, src), append(dsts, dst)
		copies = append(copies, hostCopy{dst: unsafe.Pointer(&dst[0]), src: unsafe.Pointer(&src[0]), bytes: n})
	}
	copyAll(copies)
	for k, n := range sizes {
		for i := range n {
			if dsts[k][i] != srcs[k][i] {
				t.Fatalf("copy %d (%d bytes): byte %d is %d, want %d", k, n, i, dsts[k][i], srcs[k][i])
			}
		}
		if dsts[k][n] != 0 {
			t.Fatalf("copy %d (%d bytes) wrote past its end", k, n)
		}
	}
}

// stage lays the columns out as the device copies expect them,
// latitudes then longitudes, in either precision, bad points and all (the
// device checks them).
func TestCrewStage(t *testing.T) {
	crew := newHostCrew(4)
	defer crew.close()
	const m = copyBlock/8 + copyBlock/3 + 11 // float64 columns of one block and a part
	lat, lon := make([]float64, m), make([]float64, m)
	for i := range lat {
		lat[i], lon[i] = math.Remainder(float64(i)*1e-4, 1.5), math.Remainder(float64(i)*3e-4, 3.1)
	}
	lat[m-1] = math.NaN()
	dst := make([]float64, 2*m+1)
	crew.stage(unsafe.Pointer(&dst[0]), index.Radians64(lat, lon))
	for i := range m {
		if !same(dst[i], lat[i]) || dst[m+i] != lon[i] {
			t.Fatalf("point %d staged as (%v, %v), want (%v, %v)", i, dst[i], dst[m+i], lat[i], lon[i])
		}
	}
	if dst[2*m] != 0 {
		t.Fatal("staged past the columns' end")
	}
	lat32, lon32 := make([]float32, m), make([]float32, m)
	for i := range lat32 {
		lat32[i], lon32[i] = float32(lat[i]), float32(lon[i])
	}
	dst32 := make([]float32, 2*m)
	crew.stage(unsafe.Pointer(&dst32[0]), index.Radians32(lat32, lon32))
	for i := range m {
		if !same(float64(dst32[i]), float64(lat32[i])) || dst32[m+i] != lon32[i] {
			t.Fatalf("float32 point %d staged as (%v, %v), want (%v, %v)", i, dst32[i], dst32[m+i], lat32[i], lon32[i])
		}
	}
}

// same reports whether a and b are equal or both NaN.
func same(a, b float64) bool { return a == b || a != a && b != b }

// check refuses a bad point as CheckValues names it, as engine.BadInput:
// the host's check of points written into managed memory.
func TestCrewCheck(t *testing.T) {
	crew := newHostCrew(4)
	defer crew.close()
	obs := enginetest.SpherePoints(3*stageBlock+11, 5)
	obs.Lat64[2*stageBlock+5], obs.Lat64[stageBlock+3] = 2, math.NaN()
	want := obs.CheckValues("observations", 100)
	var bad engine.BadInput
	if err := crew.check(obs, 100); !errors.As(err, &bad) || want == nil || bad.Unwrap().Error() != want.Error() {
		t.Fatalf("checking a bad point: %v, want BadInput of %v", err, want)
	}
}

// The host half of a nearest job, without a GPU: stage lays the job's
// observations out in the slot's staging, a bad one too (the device
// checks it), and
// scatter takes the staged answers into a fresh result at the job's
// place, once it is allocated.
func TestNearestJobHostHalf(t *testing.T) {
	const n, batch = 10000, 4096
	obs := enginetest.SpherePoints(n, 3)
	in, out := make([]float64, 2*batch), make([]uint32, 2*batch)
	s := &slot{gpuQuery: &gpuQuery{}, cfg: slotConfig{batch: batch, stageIn: true, stageOut: true}}
	s.hostIn = pinnedHost{p: unsafe.Pointer(&in[0]), bytes: 8 * len(in)}
	s.hostOut = pinnedHost{p: unsafe.Pointer(&out[0]), bytes: 4 * len(out)}
	run := &gpuRun{fresh: allocateResult(n)}
	defer run.fresh.populated()
	j := &slotJobs{kind: nearestKind{run}, obs: obs, slots: []*slot{s}, crew: newHostCrew(3)}
	defer j.crew.close()
	job := partition.Job{Start: 5000, End: 5000 + batch}
	if err := j.stage(0, job); err != nil {
		t.Fatal(err)
	}
	for i := range batch {
		if in[i] != obs.Lat64[job.Start+i] || in[batch+i] != obs.Lon64[job.Start+i] {
			t.Fatalf("point %d staged as (%v, %v)", job.Start+i, in[i], in[batch+i])
		}
		out[i], out[batch+i] = uint32(7*i), math.Float32bits(float32(i)/8)
	}
	if err := j.scatter(0, job); err != nil {
		t.Fatal(err)
	}
	res := run.answers()
	if len(res.Index) != n || len(res.Distance) != n {
		t.Fatalf("fresh result of %d and %d answers, want %d", len(res.Index), len(res.Distance), n)
	}
	// Only the job's place is written: the rest of a fresh result is not
	// cleared (parallel.Uncleared), the other jobs' copies fill it.
	for i := job.Start; i < job.End; i++ {
		want, wantDist := uint32(7*(i-job.Start)), float32(i-job.Start)/8
		if res.Index[i] != want || res.Distance[i] != wantDist {
			t.Fatalf("answer %d: (%d, %v), want (%d, %v)", i, res.Index[i], res.Distance[i], want, wantDist)
		}
	}
	// A bad point is staged as it is, for the device to check.
	obs.Lat64[job.Start+3000] = math.NaN()
	if err := j.stage(0, job); err != nil || !same(in[3000], math.NaN()) || !s.checksOnDevice(obs) {
		t.Fatalf("staging a bad point: %v, staged %v, checked on the device %v", err, in[3000], s.checksOnDevice(obs))
	}
}

// A job the device found a bad point in is refused with the host's
// message for it, numbered in the whole set; a job it found none in is not.
func TestCheckedNamesTheBadPoint(t *testing.T) {
	obs := enginetest.SpherePoints(10000, 3)
	obs.Lon64[7000] = 4
	small := make([]uint64, 3)
	s := &slot{gpuQuery: &gpuQuery{hostSmall: pinnedHost{p: unsafe.Pointer(&small[0]), bytes: 24}}}
	job := partition.Job{Start: 6000, End: 8000}
	small[2] = math.MaxUint64
	if err := s.checked(obs.Slice(job.Start, job.End), job); err != nil {
		t.Fatalf("no bad point seen: %v", err)
	}
	small[2] = 1000
	want := obs.CheckValues("observations", 0)
	err := s.checked(obs.Slice(job.Start, job.End), job)
	if err == nil || want == nil || err.Error() != want.Error() {
		t.Errorf("got %v, want %v", err, want)
	}
}

// BenchmarkCrewCopy is the host's side of a staged query, the floor under
// a plain call's wall beside the DMA's: 2^24 float64 observations copied
// into a slot's staging and their answers back out of it, streamed as the
// engine does them and through the caches, in jobs of 2^21 on three slots
// in turn, on a crew of GOMAXPROCS workers (the bytes a second count both
// directions, 402 MB an op). Run it on the GPU
// host: go test -run - -bench CrewCopy ./internal/gpu.
func BenchmarkCrewCopy(b *testing.B) {
	const n, batch, slots = 1 << 24, 1 << 21, 3
	lat, lon := make([]float64, n), make([]float64, n)
	for i := range lat {
		lat[i], lon[i] = float64(i)*1e-8, -float64(i)*2e-8
	}
	answers := make([]uint32, 2*n)
	for i := range answers {
		answers[i] = 1 // every page backed before the clock starts
	}
	in, out := make([][]float64, slots), make([][]uint32, slots)
	for s := range slots {
		in[s], out[s] = make([]float64, 2*batch), make([]uint32, 2*batch)
		for i := range out[s] {
			in[s][i], out[s][i] = 1, uint32(i)|1
		}
	}
	crew := newHostCrew(runtime.GOMAXPROCS(0))
	defer crew.close()
	for _, back := range []struct {
		name string
		fn   func([]hostCopy)
	}{{"stream", crew.streamAll}, {"copy", crew.copyAll}} {
		b.Run(back.name, func(b *testing.B) {
			b.SetBytes(int64(8*2*n + 4*2*n))
			for b.Loop() {
				for k, start := 0, 0; start < n; k, start = k+1, start+batch {
					s := k % slots
					crew.stage(unsafe.Pointer(&in[s][0]), index.Radians64(lat[start:start+batch], lon[start:start+batch]))
					back.fn([]hostCopy{
						{dst: unsafe.Pointer(&answers[start]), src: unsafe.Pointer(&out[s][0]), bytes: 4 * batch},
						{dst: unsafe.Pointer(&answers[n+start]), src: unsafe.Pointer(&out[s][batch]), bytes: 4 * batch}})
				}
			}
		})
	}
}

// Answers stream past the caches only when the whole query's outgrow the
// last-level cache, whatever the job's share of them.
func TestStreamAnswers(t *testing.T) {
	const llc = 256 << 20
	job := []hostCopy{{bytes: 4 << 20}, {bytes: 4 << 20}} // a job of 2^20 rows, 8 bytes a row
	for _, c := range []struct {
		rows int
		want bool
	}{{1 << 20, false}, {llc / 8, false}, {llc/8 + 1<<20, true}, {1 << 31, true}} {
		if got := streamAnswers(job, 1<<20, c.rows, llc); got != c.want {
			t.Errorf("%d rows (%d bytes of answers, cache %d): stream %v, want %v", c.rows, 8*c.rows, llc, got, c.want)
		}
	}
	if streamAnswers(nil, 0, 1<<31, llc) {
		t.Error("no copies: streamed")
	}
	if memcopy.LastLevelCacheBytes() <= 0 {
		t.Errorf("this host's last-level cache: %d bytes", memcopy.LastLevelCacheBytes())
	}
}
