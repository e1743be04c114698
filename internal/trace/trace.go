// Package trace records where a run's time goes: host stages by the wall
// clock and device stages (copies and kernels, timed with CUDA events)
// placed on the same clock, one track each, written as a Chrome/Perfetto
// trace (Trace Event Format) and summed by stage for a short report.
//
// A nil *Recorder records nothing, so instrumented code needs no checks.
package trace

import (
	"encoding/json"
	"io"
	"slices"
	"sync"
	"time"
)

// Recorder collects spans; it is safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	t0     time.Time
	spans  []Span
	tracks []string // in order of first use: a track's tid is its place + 1
}

// Span is one stage on one track: host work ("host: generate") or a GPU
// stream's copies and kernels ("GPU 0 slot 1").
type Span struct {
	Track, Name string
	Start, Dur  time.Duration // Start since the recorder's creation
}

// New starts a recorder; its clock starts now.
func New() *Recorder { return &Recorder{t0: time.Now()} }

// Add records a span that started at start and lasted dur.
func (r *Recorder) Add(track, name string, start time.Time, dur time.Duration) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.Contains(r.tracks, track) {
		r.tracks = append(r.tracks, track)
	}
	r.spans = append(r.spans, Span{Track: track, Name: name, Start: start.Sub(r.t0), Dur: dur})
}

// Begin starts a span now and returns the function that ends it:
// defer r.Begin("host", "write")().
func (r *Recorder) Begin(track, name string) func() {
	if r == nil {
		return func() {}
	}
	start := time.Now()
	return func() { r.Add(track, name, start, time.Since(start)) }
}

// Spans returns a copy of the spans recorded so far, in recording order.
func (r *Recorder) Spans() []Span {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.spans)
}

// Total is the summed time of one stage name over every track.
type Total struct {
	Name  string
	Count int
	Sum   time.Duration
}

// Totals sums the spans by name, in order of first appearance.
func (r *Recorder) Totals() []Total {
	var out []Total
	for _, s := range r.Spans() {
		k := slices.IndexFunc(out, func(t Total) bool { return t.Name == s.Name })
		if k < 0 {
			out = append(out, Total{Name: s.Name})
			k = len(out) - 1
		}
		out[k].Count++
		out[k].Sum += s.Dur
	}
	return out
}

// event is one record of the Trace Event Format: a complete event (ph X)
// or a thread name (ph M), times in microseconds.
type event struct {
	Name string         `json:"name"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"`
	Dur  float64        `json:"dur,omitempty"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Args map[string]any `json:"args,omitempty"`
}

// WriteJSON writes the trace as a JSON object that chrome://tracing and
// ui.perfetto.dev open: one named thread a track.
func (r *Recorder) WriteJSON(w io.Writer) error {
	var events []event
	if r != nil {
		r.mu.Lock()
		for k, t := range r.tracks {
			events = append(events, event{Name: "thread_name", Ph: "M", Pid: 1, Tid: k + 1, Args: map[string]any{"name": t}})
		}
		for _, s := range r.spans {
			events = append(events, event{Name: s.Name, Ph: "X", Ts: us(s.Start), Dur: us(s.Dur), Pid: 1,
				Tid: slices.Index(r.tracks, s.Track) + 1})
		}
		r.mu.Unlock()
	}
	return json.NewEncoder(w).Encode(map[string]any{"traceEvents": events, "displayTimeUnit": "ms"})
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
