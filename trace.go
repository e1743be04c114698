package geoknn

import (
	"io"
	"time"

	"github.com/geoknn/geoknn/internal/trace"
)

// Trace records where time goes: a query's host stages (checking points,
// preparing references, planning, staging, copying answers back) and, on
// GPUs, each job's copies and kernels timed with device events and placed
// on the host's clock, one track a GPU stream; a caller adds its own
// stages (Begin). WriteJSON writes a Chrome/Perfetto trace; Stages sums
// it. A Trace is safe for concurrent use, and a nil *Trace records
// nothing.
type Trace struct{ rec *trace.Recorder }

// NewTrace starts a trace; its clock starts now.
func NewTrace() *Trace { return &Trace{rec: trace.New()} }

func (t *Trace) recorder() *trace.Recorder {
	if t == nil {
		return nil
	}
	return t.rec
}

// Begin starts a stage on a track ("host") now and returns the function
// that ends it.
func (t *Trace) Begin(track, stage string) func() { return t.recorder().Begin(track, stage) }

// Stage is one stage's total over every track of a trace.
type Stage struct {
	Name  string
	Count int
	Total time.Duration
}

// Stages sums the trace by stage, in order of first appearance. Stages of
// different tracks overlap in time, so the totals may add up to more than
// the wall time.
func (t *Trace) Stages() []Stage {
	var out []Stage
	for _, s := range t.recorder().Totals() {
		out = append(out, Stage{Name: s.Name, Count: s.Count, Total: s.Sum})
	}
	return out
}

// WriteJSON writes the trace in the Trace Event Format that
// ui.perfetto.dev and chrome://tracing open.
func (t *Trace) WriteJSON(w io.Writer) error { return t.recorder().WriteJSON(w) }
