package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/geoknn/geoknn/internal/termbar"
)

// progressBar draws a query's progress on a terminal once it has lasted a
// second; on anything else (a file, CI) it stays silent.
type progressBar struct {
	bar   *termbar.Bar
	mu    sync.Mutex
	begin time.Time
}

func newProgressBar(w io.Writer, quiet bool) *progressBar {
	return &progressBar{bar: termbar.New(w, 40, quiet)}
}

func (b *progressBar) start(total int) {
	b.mu.Lock()
	b.begin = time.Now()
	b.mu.Unlock()
}

// update is the searcher's Progress callback.
func (b *progressBar) update(done, total int) {
	if !b.bar.Enabled() {
		return
	}
	b.mu.Lock()
	el := time.Since(b.begin)
	b.mu.Unlock()
	if el < time.Second {
		return
	}
	frac := float64(done) / float64(max(total, 1))
	b.bar.Draw(frac, fmt.Sprintf("%5.1f%%  %d/%d  eta %s", 100*frac, done, total, termbar.ETA(el, frac)), false)
}

func (b *progressBar) done() { b.bar.Clear() }

// stepBar is a progress bar over the steps of a simulation; the per-step
// lines are written between its redraws.
type stepBar struct{ bar *termbar.Bar }

func newStepBar(w io.Writer, quiet bool) *stepBar { return &stepBar{termbar.New(w, 40, quiet)} }

func (b *stepBar) show(done, total int, start time.Time) {
	if done >= total {
		return
	}
	frac := float64(done) / float64(total)
	b.bar.Draw(frac, fmt.Sprintf("step %d/%d  eta %s", done, total, termbar.ETA(time.Since(start), frac)), true)
}

func (b *stepBar) clear() { b.bar.Clear() }
