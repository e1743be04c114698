package arrowio

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// stuckSink is a groupSink whose encodes wait until release is closed.
type stuckSink struct {
	started chan struct{}
	release chan struct{}
}

func (s stuckSink) encode(arrow.RecordBatch, *encodeScratch) (encoded, error) {
	s.started <- struct{}{}
	<-s.release
	return encoded{}, nil
}

func (stuckSink) write(encoded) error { return nil }
func (stuckSink) close() error        { return nil }

// Abort returns while row groups are still being encoded, rather than
// waiting for each (most of a second apiece at k = 8): a signal during a
// Parquet write ends the run within a second (#41 W2).
func TestAbortDoesNotWaitForEncodes(t *testing.T) {
	s := stuckSink{make(chan struct{}, 2), make(chan struct{})}
	o := ordered{out: s, workers: 2, fl: &flusher{}}
	for range 2 {
		if err := o.dispatch(o.take(0, 1), func() arrow.RecordBatch { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	<-s.started
	<-s.started
	o.Abort() // would block forever here if it waited
	if len(o.pending) != 0 {
		t.Errorf("%d batches still pending after Abort", len(o.pending))
	}
	close(s.release)
}
