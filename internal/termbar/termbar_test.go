package termbar

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestSilentOffTerminal(t *testing.T) {
	var buf bytes.Buffer
	b := New(&buf, 10, false)
	if b.Enabled() {
		t.Fatal("a buffer is not a terminal")
	}
	b.Draw(0.5, "half", true)
	b.Clear()
	if buf.Len() != 0 {
		t.Errorf("wrote %q", buf.String())
	}
}

func TestDrawAndClear(t *testing.T) {
	var buf bytes.Buffer
	b := &Bar{w: &buf, width: 10, enabled: true}
	b.Draw(0.5, "half", true)
	if got := buf.String(); got != "\r[=====     ] half " {
		t.Errorf("drew %q", got)
	}
	b.Draw(0.6, "throttled", false) // within 100 ms of the last
	b.Draw(2, "clamped", true)
	if !strings.HasSuffix(buf.String(), "\r[==========] clamped ") {
		t.Errorf("drew %q", buf.String())
	}
	buf.Reset()
	b.Clear()
	if got := buf.String(); got != "\r"+strings.Repeat(" ", 21)+"\r" {
		t.Errorf("cleared with %q", got)
	}
}

func TestETA(t *testing.T) {
	for _, tc := range []struct {
		el   time.Duration
		frac float64
		want string
	}{{time.Second, 0, "?"}, {10 * time.Second, 0.5, "10s"}, {time.Minute, 0.75, "20s"}} {
		if got := ETA(tc.el, tc.frac); got != tc.want {
			t.Errorf("ETA(%v, %v) = %s, want %s", tc.el, tc.frac, got, tc.want)
		}
	}
}
