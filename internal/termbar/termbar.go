// Package termbar draws a one-line progress bar on a terminal and stays
// silent anywhere else (a file, a pipe, CI logs), for the knn command's
// queries, simulations and benchmark sweeps.
package termbar

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Bar is one progress line, redrawn in place. Its methods are safe for
// concurrent use.
type Bar struct {
	mu      sync.Mutex
	w       io.Writer
	enabled bool
	width   int
	shown   bool
	last    time.Time
	length  int // of the longest line drawn, for Clear
}

// New returns a bar of width cells drawing to w when w is a terminal and
// quiet is false.
func New(w io.Writer, width int, quiet bool) *Bar {
	return &Bar{w: w, width: width, enabled: !quiet && IsTerminal(w)}
}

// IsTerminal reports whether w is a character device (a terminal).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Enabled reports whether the bar draws at all.
func (b *Bar) Enabled() bool { return b.enabled }

// Draw shows "[=====     ]  text" for the fraction frac in [0, 1], at most
// every 100 ms unless force is set.
func (b *Bar) Draw(frac float64, text string, force bool) {
	if !b.enabled {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if !force && now.Sub(b.last) < 100*time.Millisecond {
		return
	}
	b.last, b.shown = now, true
	fill := int(min(max(frac, 0), 1) * float64(b.width))
	line := fmt.Sprintf("[%s%s] %s ", strings.Repeat("=", fill), strings.Repeat(" ", b.width-fill), text)
	b.length = max(b.length, len(line))
	fmt.Fprint(b.w, "\r"+line)
}

// Clear erases the line, if one was drawn, so other output can follow.
func (b *Bar) Clear() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.shown {
		fmt.Fprint(b.w, "\r"+strings.Repeat(" ", b.length)+"\r")
		b.shown = false
	}
}

// ETA estimates the time left from the time elapsed and the fraction done,
// "?" until there is something to go on.
func ETA(elapsed time.Duration, frac float64) string {
	if frac <= 0.005 {
		return "?"
	}
	return time.Duration(float64(elapsed) * (1 - frac) / frac).Round(time.Second).String()
}
