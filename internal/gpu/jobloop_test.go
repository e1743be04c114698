package gpu

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geoknn/geoknn/internal/partition"
)

// fakeDevice is a jobDevice that runs nothing: it records the loop's
// calls and checks, as each comes, the order the loop promises. Job k is
// [10k, 10k+10).
type fakeDevice struct {
	t     *testing.T
	slots int
	// fail, if set, is the error the op names for job k (ops: stage,
	// launch, inDone, wait, scatter).
	fail func(op string, k int) error
	// hook, if set, runs inside each call, after its checks.
	hook func(op string, k int)
	// jitter makes the host copies take a random while, to shuffle them.
	jitter bool

	onDevice atomic.Int32 // device calls running now: never more than one
	host     atomic.Int32 // host copies running now

	mu       sync.Mutex
	slotJob  []int // the job each slot holds (-1: none)
	readIn   []bool
	staged   map[int]bool
	launched []int // in launch order
	waited   map[int]bool
	scatters map[int]int
	stagedIn map[int]int // the slot each job was staged in
	inFlight int
	errs     []string
}

func newFakeDevice(t *testing.T, slots int) *fakeDevice {
	f := &fakeDevice{t: t, slots: slots, slotJob: make([]int, slots), readIn: make([]bool, slots),
		staged: map[int]bool{}, waited: map[int]bool{}, scatters: map[int]int{}, stagedIn: map[int]int{}}
	for i := range f.slotJob {
		f.slotJob[i] = -1
	}
	return f
}

func (f *fakeDevice) errorf(format string, args ...any) {
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}

func jobNo(job partition.Job) int { return job.Start / 10 }

// device marks a device call (one at a time, on the loop's goroutine).
func (f *fakeDevice) device(op string) func() {
	if f.onDevice.Add(1) != 1 {
		f.mu.Lock()
		f.errorf("%s: device calls overlap", op)
		f.mu.Unlock()
	}
	return func() { f.onDevice.Add(-1) }
}

func (f *fakeDevice) after(op string, k int) error {
	if f.hook != nil {
		f.hook(op, k)
	}
	if f.fail != nil {
		return f.fail(op, k)
	}
	return nil
}

func (f *fakeDevice) pause() {
	if f.jitter {
		time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond)
	}
}

func (f *fakeDevice) stage(slot int, job partition.Job) error {
	f.host.Add(1)
	defer f.host.Add(-1)
	k := jobNo(job)
	f.mu.Lock()
	if held := f.slotJob[slot]; held >= 0 && !f.readIn[slot] && !f.waited[held] {
		f.errorf("job %d staged in slot %d while job %d still reads it", k, slot, held)
	}
	f.stagedIn[k] = slot
	f.mu.Unlock()
	f.pause()
	err := f.after("stage", k)
	f.mu.Lock()
	f.staged[k] = true
	f.mu.Unlock()
	return err
}

func (f *fakeDevice) launch(slot int, job partition.Job) error {
	defer f.device("launch")()
	k := jobNo(job)
	f.mu.Lock()
	switch held := f.slotJob[slot]; {
	case !f.staged[k]:
		f.errorf("job %d launched before it was staged", k)
	case f.stagedIn[k] != slot:
		f.errorf("job %d staged in slot %d, launched in %d", k, f.stagedIn[k], slot)
	case held >= 0 && f.scatters[held] != 1:
		f.errorf("job %d launched in slot %d before job %d's answers left it", k, slot, held)
	case len(f.launched) > 0 && f.launched[len(f.launched)-1] != k-1:
		f.errorf("job %d launched after job %d", k, f.launched[len(f.launched)-1])
	}
	f.inFlight++
	if f.inFlight > f.slots {
		f.errorf("%d jobs in flight on %d slots", f.inFlight, f.slots)
	}
	f.slotJob[slot], f.readIn[slot] = k, false
	f.launched = append(f.launched, k)
	f.mu.Unlock()
	return f.after("launch", k)
}

func (f *fakeDevice) inDone(slot int) error {
	defer f.device("inDone")()
	f.mu.Lock()
	k := f.slotJob[slot]
	if k < 0 || f.waited[k] {
		f.errorf("inDone of slot %d, which holds no job in flight", slot)
	}
	f.readIn[slot] = true
	f.mu.Unlock()
	return f.after("inDone", k)
}

func (f *fakeDevice) wait(slot int, job partition.Job) error {
	defer f.device("wait")()
	k := jobNo(job)
	f.mu.Lock()
	if f.slotJob[slot] != k || f.waited[k] {
		f.errorf("wait for job %d in slot %d, which holds job %d (waited: %v)", k, slot, f.slotJob[slot], f.waited[k])
	}
	f.waited[k] = true
	f.inFlight--
	f.mu.Unlock()
	return f.after("wait", k)
}

func (f *fakeDevice) scatter(slot int, job partition.Job) error {
	f.host.Add(1)
	defer f.host.Add(-1)
	k := jobNo(job)
	f.mu.Lock()
	if !f.waited[k] || f.slotJob[slot] != k {
		f.errorf("job %d scattered from slot %d before it was waited for", k, slot)
	}
	f.mu.Unlock()
	f.pause()
	err := f.after("scatter", k)
	f.mu.Lock()
	f.scatters[k]++
	f.mu.Unlock()
	return err
}

// check reports the broken promises, and whether a host copy outlived
// the loop.
func (f *fakeDevice) check() {
	f.t.Helper()
	if n := f.host.Load(); n != 0 {
		f.t.Errorf("%d host copies still running after the loop returned", n)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range f.errs {
		f.t.Error(e)
	}
}

// jobsOf hands out n jobs, job k being [10k, 10k+10).
func jobsOf(n int) func() (partition.Job, bool) {
	k := 0
	return func() (partition.Job, bool) {
		if k == n {
			return partition.Job{}, false
		}
		k++
		return partition.Job{Start: 10 * (k - 1), End: 10 * k}, true
	}
}

// Every job is staged, launched in order, waited for and scattered once,
// with a slot's staging and answers never touched while the device uses
// them, for any number of slots and jobs.
func TestJobLoopRunsEveryJobOnce(t *testing.T) {
	for _, slots := range []int{1, 2, 3, 4} {
		for _, jobs := range []int{0, 1, 2, 3, 7, 40} {
			t.Run(fmt.Sprintf("%d slots, %d jobs", slots, jobs), func(t *testing.T) {
				f := newFakeDevice(t, slots)
				f.jitter = true
				if err := runJobLoop(context.Background(), f, slots, jobsOf(jobs)); err != nil {
					t.Fatal(err)
				}
				f.check()
				if len(f.launched) != jobs {
					t.Fatalf("%d jobs launched, want %d", len(f.launched), jobs)
				}
				for k := range jobs {
					if !f.waited[k] || f.scatters[k] != 1 {
						t.Errorf("job %d: waited %v, scattered %d times", k, f.waited[k], f.scatters[k])
					}
				}
			})
		}
	}
}

// The host's copies run beside the device's work and beside each other:
// a slot's next job is staged while the loop waits for the job it holds,
// and that job's answers leave while the next job is staged. A loop that
// did either in turn would never get past the first meeting.
func TestJobLoopOverlapsHostCopies(t *testing.T) {
	const slots = 3
	f := newFakeDevice(t, slots)
	stagingStarted := make(map[int]chan struct{})
	scatterStarted := make(map[int]chan struct{})
	for k := range 12 {
		stagingStarted[k], scatterStarted[k] = make(chan struct{}), make(chan struct{})
	}
	meet := func(ch chan struct{}, what string) {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			panic("job loop: " + what + " never started: the loop runs its copies in turn")
		}
	}
	f.hook = func(op string, k int) {
		switch op {
		case "stage":
			close(stagingStarted[k])
			if k >= slots {
				meet(scatterStarted[k-slots], fmt.Sprintf("job %d's scatter, beside job %d's staging,", k-slots, k))
			}
		case "wait":
			// Job k+slots takes k's slot: its staging runs while the
			// device still holds job k.
			if k+slots < 12 {
				meet(stagingStarted[k+slots], fmt.Sprintf("job %d's staging, while job %d is waited for,", k+slots, k))
			}
		case "scatter":
			close(scatterStarted[k])
			if k+slots < 12 {
				meet(stagingStarted[k+slots], fmt.Sprintf("job %d's staging, beside job %d's scatter,", k+slots, k))
			}
		}
	}
	if err := runJobLoop(context.Background(), f, slots, jobsOf(12)); err != nil {
		t.Fatal(err)
	}
	f.check()
}

// An error in any call ends the loop with that error, naming its job:
// no job launches after it, and no host copy outlives the loop.
func TestJobLoopStopsAtTheFirstError(t *testing.T) {
	boom := errors.New("boom")
	for _, op := range []string{"stage", "launch", "inDone", "wait", "scatter"} {
		for _, at := range []int{0, 1, 4} {
			t.Run(fmt.Sprintf("%s of job %d", op, at), func(t *testing.T) {
				f := newFakeDevice(t, 3)
				f.jitter = true
				f.fail = func(o string, k int) error {
					if o == op && k == at {
						return boom
					}
					return nil
				}
				var launchedAfter atomic.Int32
				var failed atomic.Bool
				f.hook = func(o string, k int) {
					if o == "launch" && failed.Load() {
						launchedAfter.Add(1)
					}
					if o == op && k == at {
						failed.Store(true)
					}
				}
				err := runJobLoop(context.Background(), f, 3, jobsOf(9))
				if !errors.Is(err, boom) {
					t.Fatalf("error %v, want %v", err, boom)
				}
				if want := fmt.Sprintf("job [%d, %d)", 10*at, 10*at+10); !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %s", err, want)
				}
				// A scatter runs beside later launches; every other call
				// fails before the next launch.
				if n := launchedAfter.Load(); n > 0 && op != "scatter" {
					t.Errorf("%d jobs launched after the failure", n)
				}
				f.check()
			})
		}
	}
}

// A cancelled context stops the loop before its next launch.
func TestJobLoopStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newFakeDevice(t, 3)
	f.hook = func(op string, k int) {
		if op == "launch" && k == 4 {
			cancel()
		}
	}
	err := runJobLoop(ctx, f, 3, jobsOf(20))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if len(f.launched) != 5 {
		t.Errorf("%d jobs launched, want 5", len(f.launched))
	}
	f.check()
}

func TestJobLoopRefusesNoSlots(t *testing.T) {
	if err := runJobLoop(context.Background(), newFakeDevice(t, 1), 0, jobsOf(1)); err == nil {
		t.Fatal("no error for a loop of no slots")
	}
}

// Random loops, failures and cancellations keep every promise: the order
// of the calls, no host copy after the loop, and the failure (or none)
// reported.
func TestJobLoopRandomly(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	ops := []string{"stage", "launch", "inDone", "wait", "scatter", "cancel", ""}
	for round := range 300 {
		slots, jobs := 1+rng.IntN(4), rng.IntN(25)
		op, at := ops[rng.IntN(len(ops))], rng.IntN(max(jobs, 1))
		ctx, cancel := context.WithCancel(context.Background())
		f := newFakeDevice(t, slots)
		f.jitter = rng.IntN(2) == 0
		boom := errors.New("boom")
		var failed atomic.Bool
		f.fail = func(o string, k int) error {
			if o == op && k == at {
				failed.Store(true)
				return boom
			}
			return nil
		}
		f.hook = func(o string, k int) {
			if op == "cancel" && o == "launch" && k == at {
				failed.Store(true)
				cancel()
			}
		}
		err := runJobLoop(ctx, f, slots, jobsOf(jobs))
		cancel()
		f.check()
		switch {
		case !failed.Load() && err != nil:
			t.Fatalf("round %d: %v with no failure", round, err)
		case !failed.Load():
			for k := range jobs {
				if !f.waited[k] || f.scatters[k] != 1 {
					t.Fatalf("round %d: job %d waited %v, scattered %d times", round, k, f.waited[k], f.scatters[k])
				}
			}
		case op == "cancel" && !errors.Is(err, context.Canceled) && at < jobs-1:
			t.Fatalf("round %d: cancelled at job %d of %d: %v", round, at, jobs, err)
		case op != "cancel" && !errors.Is(err, boom):
			t.Fatalf("round %d: %s of job %d failed, loop returned %v", round, op, at, err)
		}
	}
}
