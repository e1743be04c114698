package bench

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/geoknn/geoknn/internal/termbar"
)

// bar draws the sweep's progress on a terminal, in the style of `knn run`'s
// bar: the share of the work done (cases weighted by pairs), the case and
// run, and an estimate of the time left. Anywhere else it is silent.
type bar struct {
	mu    sync.Mutex
	line  *termbar.Bar
	start time.Time

	total, done  float64 // work units: pairs per run, summed
	cases, cur   int
	label        string
	unit         float64 // units of one run of the current case
	runs, runIdx int
	frac         float64 // of the current run, from the engine
}

func newBar(w io.Writer) *bar {
	if w == nil {
		w = io.Discard
	}
	return &bar{line: termbar.New(w, 20, false)}
}

func (b *bar) begin(total float64, cases int) {
	b.mu.Lock()
	b.start, b.total, b.cases = time.Now(), total, cases
	b.mu.Unlock()
}

// skip drops cases (and their units) that will not run.
func (b *bar) skip(units float64, cases int) {
	b.mu.Lock()
	b.total -= units
	b.cases -= cases
	b.mu.Unlock()
}

func (b *bar) startCase(label string, unit float64, runs int) {
	b.mu.Lock()
	b.cur++
	b.label, b.unit, b.runs = label, unit, runs
	b.mu.Unlock()
}

func (b *bar) startRun(r int) {
	b.mu.Lock()
	b.runIdx, b.frac = r, 0
	b.draw(false)
	b.mu.Unlock()
}

// run is the searcher's Progress callback.
func (b *bar) run(done, total int) {
	b.mu.Lock()
	b.frac = float64(done) / float64(max(total, 1))
	b.draw(false)
	b.mu.Unlock()
}

func (b *bar) endRun() {
	b.mu.Lock()
	b.done += b.unit
	b.frac = 0
	b.mu.Unlock()
}

// draw redraws (the line throttles itself to every 100 ms); the caller
// holds mu.
func (b *bar) draw(force bool) {
	if !b.line.Enabled() {
		return
	}
	frac := min(1, (b.done+b.frac*b.unit)/max(b.total, 1))
	b.line.Draw(frac, fmt.Sprintf("%5.1f%%  case %d/%d %s  run %d/%d  eta %s", 100*frac, b.cur, b.cases, b.label,
		b.runIdx+1, b.runs, termbar.ETA(time.Since(b.start), frac)), force)
}

// clear erases the bar (before a note, and at the end).
func (b *bar) clear() { b.line.Clear() }
