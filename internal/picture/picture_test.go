package picture

import (
	"math"
	"testing"
)

// The pixel centres of the grid fall in their own pixels.
func TestGridPoints(t *testing.T) {
	c := newCanvas(64)
	g := GridPoints(64)
	for i := range g.Len() {
		if x, y := c.pixel(g.At(i)); y*c.w+x != i {
			t.Fatalf("grid point %d lands in pixel (%d, %d)", i, x, y)
		}
	}
	if x, y := c.pixel(math.Pi/2, math.Pi); x != 63 || y != 0 {
		t.Errorf("north pole on the antimeridian in pixel (%d, %d)", x, y)
	}
}

func TestSimTime(t *testing.T) {
	for s, want := range map[float64]string{
		0: "t = 0 s", 90: "t = 90 s", 3600: "t = 60 min", 9000: "t = 2.5 h", 4 * 86400: "t = 4 d",
	} {
		if got := SimTime(s); got != want {
			t.Errorf("SimTime(%v) = %q, want %q", s, got, want)
		}
		for _, r := range SimTime(s) {
			if _, ok := font[r]; !ok {
				t.Errorf("no glyph for %q", r)
			}
		}
	}
}
