// Package partition splits observations into jobs for the workers of an
// engine: contiguous ranges, dealt to each worker's own queue in order, with
// idle workers stealing from the back of the busiest queue so that every
// device stays busy to the end even when devices differ in speed.
package partition

import (
	"fmt"
	"sync"
)

// Job is the half-open range [Start, End) of observations.
type Job struct {
	Start, End int
}

// Len is the number of observations in the job.
func (j Job) Len() int { return j.End - j.Start }

// Split cuts n observations into jobs of at most size, the last one taking
// the remainder. size <= 0 is an error; n == 0 gives no jobs.
func Split(n, size int) ([]Job, error) {
	if size <= 0 {
		return nil, fmt.Errorf("partition: job size %d is not positive", size)
	}
	if n < 0 {
		return nil, fmt.Errorf("partition: %d observations", n)
	}
	jobs := make([]Job, 0, (n+size-1)/size)
	for s := 0; s < n; s += size {
		jobs = append(jobs, Job{Start: s, End: min(s+size, n)})
	}
	return jobs, nil
}

// BatchSize picks the job size for n observations on workers workers: at
// most maxPerJob (what one job's buffers may hold), at least minPerJob (so a
// job fills a device), and small enough that each worker gets about perWorker
// jobs, which lets transfers overlap compute and lets stealing even out the
// end. The result is a multiple of align (a kernel's observations per block).
func BatchSize(n, workers, perWorker, minPerJob, maxPerJob, align int) int {
	if workers < 1 {
		workers = 1
	}
	if perWorker < 1 {
		perWorker = 1
	}
	if align < 1 {
		align = 1
	}
	size := (n + workers*perWorker - 1) / (workers * perWorker)
	size = max(size, minPerJob)
	if maxPerJob > 0 {
		size = min(size, maxPerJob)
	}
	size = (size + align - 1) / align * align
	return max(size, align)
}

// Queue deals jobs to workers. Each worker takes from the front of its own
// queue; when that is empty it steals from the back of the longest other
// queue. Safe for concurrent use.
type Queue struct {
	mu     sync.Mutex
	queues [][]Job
	total  int
}

// NewQueue deals jobs to workers in contiguous runs: worker w gets the w-th
// share, so each device reads one contiguous region of the observations.
func NewQueue(jobs []Job, workers int) *Queue {
	if workers < 1 {
		workers = 1
	}
	q := &Queue{queues: make([][]Job, workers), total: len(jobs)}
	for w := 0; w < workers; w++ {
		lo, hi := w*len(jobs)/workers, (w+1)*len(jobs)/workers
		q.queues[w] = append([]Job(nil), jobs[lo:hi]...)
	}
	return q
}

// Next returns worker's next job and whether it was stolen; ok is false when
// no job is left anywhere.
func (q *Queue) Next(worker int) (job Job, stolen, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if own := q.queues[worker]; len(own) > 0 {
		q.queues[worker] = own[1:]
		return own[0], false, true
	}
	victim := -1
	for w, jobs := range q.queues {
		if len(jobs) > 0 && (victim < 0 || len(jobs) > len(q.queues[victim])) {
			victim = w
		}
	}
	if victim < 0 {
		return Job{}, false, false
	}
	jobs := q.queues[victim]
	q.queues[victim] = jobs[:len(jobs)-1]
	return jobs[len(jobs)-1], true, true
}

// Len is the total number of jobs the queue was made with.
func (q *Queue) Len() int { return q.total }

// Left is the number of jobs not yet handed out.
func (q *Queue) Left() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	left := 0
	for _, jobs := range q.queues {
		left += len(jobs)
	}
	return left
}
