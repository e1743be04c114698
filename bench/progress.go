package bench

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// bar draws the sweep's progress on a terminal, in the style of `knn run`'s
// bar: the share of the work done (cases weighted by pairs), the case and
// run, and an estimate of the time left. Anywhere else it is silent.
type bar struct {
	mu      sync.Mutex
	w       io.Writer
	enabled bool
	start   time.Time
	last    time.Time
	shown   bool

	total, done  float64 // work units: pairs per run, summed
	cases, cur   int
	label        string
	unit         float64 // units of one run of the current case
	runs, runIdx int
	frac         float64 // of the current run, from the engine
}

func newBar(w io.Writer) *bar {
	b := &bar{w: w}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			b.enabled = true
		}
	}
	return b
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

// draw redraws at most every 100 ms; the caller holds mu.
func (b *bar) draw(force bool) {
	if !b.enabled {
		return
	}
	now := time.Now()
	if !force && now.Sub(b.last) < 100*time.Millisecond {
		return
	}
	b.last, b.shown = now, true
	const width = 20
	frac := min(1, (b.done+b.frac*b.unit)/max(b.total, 1))
	fill := int(frac * width)
	eta := "?"
	if frac > 0.005 {
		eta = time.Duration(float64(now.Sub(b.start)) * (1 - frac) / frac).Round(time.Second).String()
	}
	line := fmt.Sprintf("\r[%s%s] %5.1f%%  case %d/%d %s  run %d/%d  eta %s ", strings.Repeat("=", fill),
		strings.Repeat(" ", width-fill), 100*frac, b.cur, b.cases, b.label, b.runIdx+1, b.runs, eta)
	fmt.Fprint(b.w, line)
}

// clear erases the bar (before a note, and at the end).
func (b *bar) clear() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.shown {
		fmt.Fprint(b.w, "\r"+strings.Repeat(" ", 110)+"\r")
		b.shown = false
	}
}
