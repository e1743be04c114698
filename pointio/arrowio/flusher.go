package arrowio

import (
	"sync"
)

// flusher writes encoded batches to their sink, in the order they are
// sent, on a goroutine of its own, so that the goroutine handing the
// batches in (a stream's write stage) does not wait for their bytes to
// reach the file between one group's answers and the next (on 2 x H200
// that stage bounded a 2^27 Parquet output, busy 1.28 s, while about 10
// of 32 cores were busy; the flusher alone was not timed apart from the
// other writer changes). A group comes back for reuse
// once its bytes are written. The goroutine starts with the first batch
// and ends in wait or abort.
type flusher struct {
	queue chan encodeResult
	done  chan struct{}

	mu      sync.Mutex
	spare   []*answerGroup // groups written, for reuse
	first   error          // the sink's first error
	aborted bool
}

// flushQueue is how many encoded batches may wait for the sink.
const flushQueue = 2

// send queues r for out, starting the goroutine with the first batch.
func (f *flusher) send(out groupSink, r encodeResult) {
	if f.queue == nil {
		f.queue, f.done = make(chan encodeResult, flushQueue), make(chan struct{})
		go f.run(out)
	}
	f.queue <- r
}

// run writes each batch queued, or drops it after an error or abort.
func (f *flusher) run(out groupSink) {
	defer close(f.done)
	for r := range f.queue {
		if f.err() != nil || f.isAborted() {
			f.drop(r)
			continue
		}
		if err := out.write(r.e); err != nil {
			f.mu.Lock()
			f.first = err
			f.mu.Unlock()
		}
		f.put(r.g)
	}
}

// err is the sink's first error so far.
func (f *flusher) err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.first
}

func (f *flusher) isAborted() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.aborted
}

// wait waits for every batch sent to be written and reports the first
// error.
func (f *flusher) wait() error {
	if f.queue != nil {
		close(f.queue)
		<-f.done
		f.queue = nil
	}
	return f.err()
}

// abort drops the batches still queued and waits for the one being
// written.
func (f *flusher) abort() {
	f.mu.Lock()
	f.aborted = true
	f.mu.Unlock()
	f.wait()
}

// drop releases a batch that is not to be written and keeps its group.
func (f *flusher) drop(r encodeResult) {
	if r.e.rec != nil {
		r.e.rec.Release()
	}
	f.put(r.g)
}

func (f *flusher) put(g *answerGroup) {
	f.mu.Lock()
	f.spare = append(f.spare, g)
	f.mu.Unlock()
}

// spareGroup is a group written, or a new one.
func (f *flusher) spareGroup() *answerGroup {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := len(f.spare); n > 0 {
		g := f.spare[n-1]
		f.spare = f.spare[:n-1]
		return g
	}
	return &answerGroup{}
}
