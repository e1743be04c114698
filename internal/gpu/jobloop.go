package gpu

import (
	"context"
	"fmt"
	"sync"

	"github.com/geoknn/geoknn/internal/partition"
)

// jobDevice is one GPU's part of a query as the job loop drives it, for
// any query kind (nearest, k nearest, within a radius). The loop calls
// inDone, launch and wait on the GPU's thread, one at a time; stage and
// scatter, the host's copies, it runs on goroutines of their own, beside
// the device's work and each other. Each slot holds one job at a time.
type jobDevice interface {
	// stage puts the job's observations where launch copies them in
	// from (the slot's page-locked staging), checking them on the way.
	stage(slot int, job partition.Job) error
	// launch queues the job on the slot: its copy in, its kernels after
	// those of the job launched before, and its answers' copy out.
	launch(slot int, job partition.Job) error
	// inDone waits until the slot's job in flight has copied its
	// observations in, so that the slot's staging takes the next job's.
	inDone(slot int) error
	// wait waits until the slot's job in flight is done on the device and
	// adds its device times to the query's.
	wait(slot int, job partition.Job) error
	// scatter copies the slot's answers, back on the host, into the
	// result.
	scatter(slot int, job partition.Job) error
}

// runJobLoop runs the jobs next hands out, in order, on dev's slots in
// rotation: while the device runs the jobs of the other slots, the host
// copies the next job's observations into a freed slot's staging and the
// answers of the job that slot held into the result, both at once. A
// job launches once it is staged and its slot's answers have left, so
// the host's copies never wait for one another and the device waits for
// the host only when the host is the slower. It returns the first error,
// after every host copy it started has ended; jobs launched and not
// waited for may still be in flight on the device (the caller drains
// them). ctx is checked before every launch.
func runJobLoop(ctx context.Context, dev jobDevice, slots int, next func() (partition.Job, bool)) error {
	if slots < 1 {
		return fmt.Errorf("job loop: %d slots", slots)
	}
	l := &jobLoop{dev: dev, slots: make([]loopSlot, slots)}
	err := l.run(ctx, next)
	l.host.Wait()
	return err
}

// jobLoop is runJobLoop's state.
type jobLoop struct {
	dev   jobDevice
	slots []loopSlot
	host  sync.WaitGroup // every host copy started
}

// loopSlot is a slot's state in the loop: the job it holds on the device
// (busy until waited for), the staging of the job it takes next, and the
// scatter of the answers of the one it held before.
type loopSlot struct {
	job       partition.Job
	busy      bool
	staged    *hostTask
	scattered *hostTask
}

func (l *jobLoop) run(ctx context.Context, next func() (partition.Job, bool)) error {
	job, ok := next()
	if !ok {
		return nil
	}
	if err := l.prepare(0, job); err != nil {
		return err
	}
	for k := 0; ; k++ {
		if err := l.launch(ctx, k%len(l.slots), job); err != nil {
			return err
		}
		if job, ok = next(); !ok {
			return l.drain(k)
		}
		if err := l.prepare((k+1)%len(l.slots), job); err != nil {
			return err
		}
	}
}

// launch launches job on slot i once it is staged and the answers of the
// slot's job before it are scattered.
func (l *jobLoop) launch(ctx context.Context, i int, job partition.Job) error {
	s := &l.slots[i]
	staged, scattered := s.staged, s.scattered
	s.staged, s.scattered = nil, nil
	if err := staged.wait(); err != nil {
		return err
	}
	if err := scattered.wait(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := l.dev.launch(i, job); err != nil {
		return jobError(job, err)
	}
	s.job, s.busy = job, true
	return nil
}

// prepare readies slot i for job: the staging starts as soon as the
// slot's job in flight has copied its observations in, and that job's
// scatter as soon as it is done.
func (l *jobLoop) prepare(i int, job partition.Job) error {
	s := &l.slots[i]
	if s.busy {
		if err := l.dev.inDone(i); err != nil {
			return jobError(s.job, err)
		}
	}
	s.staged = l.start(job, func() error { return l.dev.stage(i, job) })
	return l.retire(i)
}

// retire waits for slot i's job in flight, if any, and starts its
// scatter.
func (l *jobLoop) retire(i int) error {
	s := &l.slots[i]
	if !s.busy {
		return nil
	}
	s.busy = false
	job := s.job
	if err := l.dev.wait(i, job); err != nil {
		return jobError(job, err)
	}
	s.scattered = l.start(job, func() error { return l.dev.scatter(i, job) })
	return nil
}

// drain retires every slot, the oldest job first (k is the last one
// launched), and waits for their scatters.
func (l *jobLoop) drain(k int) error {
	n := len(l.slots)
	for d := 1; d <= n; d++ {
		if err := l.retire((k + d) % n); err != nil {
			return err
		}
	}
	for i := range l.slots {
		if err := l.slots[i].scattered.wait(); err != nil {
			return err
		}
	}
	return nil
}

// start runs fn, a host copy of job, on a goroutine of its own.
func (l *jobLoop) start(job partition.Job, fn func() error) *hostTask {
	t := &hostTask{done: make(chan struct{})}
	l.host.Add(1)
	go func() {
		defer l.host.Done()
		defer close(t.done)
		if err := fn(); err != nil {
			t.err = jobError(job, err)
		}
	}()
	return t
}

// hostTask is a host copy running on its own goroutine.
type hostTask struct {
	done chan struct{}
	err  error
}

// wait waits for the task (none: nil) and returns its error.
func (t *hostTask) wait() error {
	if t == nil {
		return nil
	}
	<-t.done
	return t.err
}

// jobError names the job an error happened in.
func jobError(job partition.Job, err error) error {
	return fmt.Errorf("job [%d, %d): %w", job.Start, job.End, err)
}
