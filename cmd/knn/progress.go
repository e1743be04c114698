package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// progressBar draws a bar on a terminal once a run has lasted a second;
// on anything else (a file, CI) it stays silent.
type progressBar struct {
	mu      sync.Mutex
	w       io.Writer
	enabled bool
	begin   time.Time
	total   int
	shown   bool
	last    time.Time
}

func newProgressBar(w io.Writer, quiet bool) *progressBar {
	enabled := false
	if f, ok := w.(*os.File); ok && !quiet {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			enabled = true
		}
	}
	return &progressBar{w: w, enabled: enabled}
}

func (b *progressBar) start(total int) {
	b.mu.Lock()
	b.begin, b.total, b.shown = time.Now(), total, false
	b.mu.Unlock()
}

func (b *progressBar) update(done, total int) {
	if !b.enabled {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if now.Sub(b.begin) < time.Second || now.Sub(b.last) < 100*time.Millisecond {
		return
	}
	b.last, b.shown = now, true
	const width = 40
	frac := float64(done) / float64(max(total, 1))
	fill := int(frac * width)
	eta := time.Duration(float64(now.Sub(b.begin)) * (1 - frac) / max(frac, 1e-9))
	fmt.Fprintf(b.w, "\r[%s%s] %5.1f%%  %d/%d  eta %s ", strings.Repeat("=", fill), strings.Repeat(" ", width-fill),
		100*frac, done, total, eta.Round(time.Second))
}

func (b *progressBar) done() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.shown {
		fmt.Fprint(b.w, "\r"+strings.Repeat(" ", 80)+"\r")
	}
}
