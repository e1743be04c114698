package gpu

import (
	"context"
	"time"

	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/memcopy"
	"github.com/geoknn/geoknn/internal/partition"
	"github.com/geoknn/geoknn/internal/trace"
)

// queryKind is what a kind of query does with a job on a slot once its
// observations are on the device: the kernels, and the answers' way back.
type queryKind interface {
	// kernels queues the job's kernels on the slot's stream.
	kernels(d *gpuDevice, s *slot, job partition.Job) error
	// download queues the copies of the job's answers and its refined
	// count off the device and records evOut after them.
	download(d *gpuDevice, s *slot, job partition.Job) error
	// copies are the host copies that take the job's answers on from the
	// slot's staging into the result, once download's are done (none when
	// they land in place). It runs on the host's side of the loop.
	copies(s *slot, job partition.Job) []hostCopy
}

// slotJobs is one GPU's share of a query's jobs, of any kind, as the job
// loop drives them (jobDevice): the observations staged on the GPU's
// crew of host goroutines, copied in, ranked by kind's kernels, the
// answers copied out and scattered into the result on the crew.
type slotJobs struct {
	d     *gpuDevice
	kind  queryKind
	obs   index.Points
	slots []*slot
	crew  *hostCrew
	trc   *trace.Recorder
	host  *hostAllocs // where the caller's page-locked observations live (copied in straight from there)
	t     *stageTimes
	// after is the event the next job's kernels wait for: the last
	// launched job's end (or the index build's), so that one job's
	// kernels run at a time and each job's kernel time is its own.
	after cuda.Event
	// refined: add the jobs' refined counts to t (the seed port has none).
	refined  bool
	progress func(done int) // nil: none
}

// runSlotJobs runs the jobs next hands out on d's first slots slots,
// with a crew of workers host goroutines.
func (d *gpuDevice) runSlotJobs(ctx context.Context, j *slotJobs, slots, workers int, next func() (partition.Job, bool)) error {
	j.d, j.slots = d, d.slots[:slots]
	j.crew = newHostCrew(workers)
	defer j.crew.close()
	return runJobLoop(ctx, j, slots, next)
}

// queueJobs is next for worker w's jobs of queue.
func queueJobs(queue *partition.Queue, w int) func() (partition.Job, bool) {
	return func() (partition.Job, bool) {
		job, _, ok := queue.Next(w)
		return job, ok
	}
}

// stage copies the job's observations into the slot's page-locked staging
// on the crew, a plain copy in copyBlock pieces: the device checks them
// once they are copied in, as it does those copied in straight from the
// caller's page-locked columns (valid.go). Those written into managed
// memory are checked here; generated ones need no check. A slot's
// staging and scatter may run at once: each has its own track in a trace
// ("host in", "host out").
func (j *slotJobs) stage(i int, job partition.Job) error {
	s := j.slots[i]
	obs := j.obs.Slice(job.Start, job.End)
	switch {
	case s.stages(obs):
		start := time.Now()
		j.crew.stage(s.hostIn.p, obs)
		j.trc.Add(s.track+" host in", "stage in", start, time.Since(start))
	case s.cfg.managed:
		defer j.trc.Begin(s.track+" host in", "check points")()
		return j.crew.check(obs, job.Start)
	}
	return nil
}

// launch queues the job's copy in, its kernels after j.after, and its
// answers' copy out on the slot's stream.
func (j *slotJobs) launch(i int, job partition.Job) error {
	d, s := j.d, j.slots[i]
	if err := s.upload(d, j.obs.Slice(job.Start, job.End), j.host); err != nil {
		return err
	}
	if err := d.drv.EventRecord(s.evCopied, s.stream); err != nil {
		return err
	}
	if j.after != 0 {
		if err := d.drv.StreamWaitEvent(s.stream, j.after); err != nil {
			return err
		}
	}
	if err := d.drv.EventRecord(s.evStart, s.stream); err != nil {
		return err
	}
	if s.checksOnDevice(j.obs) {
		if err := s.queueCheck(d, j.obs.Slice(job.Start, job.End)); err != nil {
			return err
		}
	}
	if err := j.kind.kernels(d, s, job); err != nil {
		return err
	}
	if err := d.drv.EventRecord(s.evStop, s.stream); err != nil {
		return err
	}
	j.after = s.evStop
	return j.kind.download(d, s, job)
}

// inDone waits for the slot's job in flight to have copied its
// observations in.
func (j *slotJobs) inDone(i int) error {
	return j.d.drv.EventSynchronize(j.slots[i].evCopied)
}

// wait waits for the slot's job and adds its device times, its trace and
// its refined count.
func (j *slotJobs) wait(i int, job partition.Job) error {
	d, s, t := j.d, j.slots[i], j.t
	if err := d.drv.StreamSynchronize(s.stream); err != nil {
		return err
	}
	if s.checksOnDevice(j.obs) {
		if err := s.checked(j.obs.Slice(job.Start, job.End), job); err != nil {
			return err
		}
	}
	err := elapsed(d.drv, []eventSpan{{s.evIn, s.evCopied, &t.upload}, {s.evStart, s.evStop, &t.kernel},
		{s.evStop, s.evOut, &t.download}})
	if err != nil {
		return err
	}
	if err := s.traceDevice(d, j.trc); err != nil {
		return err
	}
	if j.refined {
		t.refined += s.refined()
	}
	if j.progress != nil {
		j.progress(job.Len())
	}
	return nil
}

// scatter copies the slot's answers from its staging into the result on
// the crew: streamed past the caches where the query's answers outgrow
// the last-level cache, through them otherwise (streamAnswers).
func (j *slotJobs) scatter(i int, job partition.Job) error {
	s := j.slots[i]
	copies := j.kind.copies(s, job)
	if len(copies) == 0 {
		return nil
	}
	defer j.trc.Begin(s.track+" host out", "copy back")()
	if streamAnswers(copies, job.Len(), j.obs.Len(), memcopy.LastLevelCacheBytes()) {
		j.crew.streamAll(copies)
	} else {
		j.crew.copyAll(copies)
	}
	return nil
}

// streamAnswers reports whether a query of rows observations, whose job
// of jobRows copies out copies, has more answers than a last-level cache
// of cacheBytes holds. Then no line of the result stays in cache until it
// is read, and a copy through the caches reads each line before writing
// it: streamed, such queries came back markedly faster, and smaller
// results, read soon after (a plain call's, a streamed file's chunk),
// slower (BENCHMARKS.md, "What the host allows").
func streamAnswers(copies []hostCopy, jobRows, rows, cacheBytes int) bool {
	var bytes uint64
	for _, c := range copies {
		bytes += uint64(c.bytes)
	}
	return bytes/uint64(max(jobRows, 1))*uint64(rows) > uint64(cacheBytes)
}
