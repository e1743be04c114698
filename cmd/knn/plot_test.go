package main

import (
	"image"
	"image/draw"
	"image/gif"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/geoknn/geoknn/internal/picture"
)

func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}

func decodeGIF(t *testing.T, path string) *gif.GIF {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := gif.DecodeAll(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return g
}

func TestPlotPNG(t *testing.T) {
	dir := t.TempDir()
	ref := write(t, dir, "ref.csv", "lat,lon\n0,0\n45,90\n-45,-90\n89,179\n-60,-179.5\n")
	for _, tc := range []struct {
		name string
		args []string
		w    int
	}{
		{"points", []string{"--obs", "3000", "--ref", "10"}, 1600},
		{"grid", []string{"--grid", "--ref", ref, "--width", "128"}, 128},
		{"grid and points", []string{"--grid", "--obs", "200", "--ref", "7", "--width", "200"}, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name+".png")
			args := append([]string{"plot", "--png", out, "--engine", "cpu"}, tc.args...)
			if _, stderr, err := runKnn(t, args...); err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			img := decodePNG(t, out)
			if b := img.Bounds(); b.Dx() != tc.w || b.Dy() != tc.w/2 {
				t.Errorf("size %v, want %d x %d", b, tc.w, tc.w/2)
			}
		})
	}
	// The grid picture has one light colour per reference.
	img := decodePNG(t, filepath.Join(dir, "grid.png")).(*image.Paletted)
	seen := map[uint8]bool{}
	for _, v := range img.Pix {
		if picture.IsRegionColour(v) {
			seen[v] = true
		}
	}
	if len(seen) != 5 {
		t.Errorf("%d region colours, want 5", len(seen))
	}
}

func TestPlotSimulation(t *testing.T) {
	dir := t.TempDir()
	anim, strip, last := filepath.Join(dir, "a.gif"), filepath.Join(dir, "s.png"), filepath.Join(dir, "last.png")
	if _, stderr, err := runKnn(t, "plot", "--simulate", "--grid", "--ref", "12", "--steps", "9", "--dt", "3600",
		"--width", "96", "--frames", "4", "--strip-frames", "3", "--gif", anim, "--strip", strip, "--png", last, "--engine", "cpu"); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	g := decodeGIF(t, anim)
	if len(g.Image) != 4 || g.Config.Width != 96 || g.Config.Height != 48 {
		t.Fatalf("GIF: %d frames of %d x %d, want 4 of 96 x 48", len(g.Image), g.Config.Width, g.Config.Height)
	}
	// The frames drawn one over the other end on the last step.
	comp := image.NewRGBA(image.Rect(0, 0, 96, 48))
	for _, fr := range g.Image {
		draw.Draw(comp, fr.Bounds(), fr, fr.Bounds().Min, draw.Over)
	}
	want := decodePNG(t, last)
	for y := range 48 {
		for x := range 96 {
			if r1, g1, b1, _ := comp.At(x, y).RGBA(); [3]uint32{r1, g1, b1} != rgb(want.At(x, y)) {
				t.Fatalf("GIF's last frame differs from --png at (%d, %d)", x, y)
			}
		}
	}
	if b := decodePNG(t, strip).Bounds(); b.Dx() != 3*96+2*6 || b.Dy() != 48 {
		t.Errorf("strip %v", b)
	}
	// Fewer steps than --frames: one frame a step.
	if _, stderr, err := runKnn(t, "plot", "--simulate", "--obs", "500", "--ref", "5", "--steps", "3", "--replace", "0.5",
		"--gif", anim, "--engine", "cpu", "--quiet"); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if g := decodeGIF(t, anim); len(g.Image) != 3 || g.Config.Width != 800 {
		t.Errorf("GIF: %d frames %d wide, want 3 of 800", len(g.Image), g.Config.Width)
	}
}

func rgb(c interface{ RGBA() (r, g, b, a uint32) }) [3]uint32 {
	r, g, b, _ := c.RGBA()
	return [3]uint32{r, g, b}
}

func TestPlotBadFlags(t *testing.T) {
	dir := t.TempDir()
	png, gifOut := filepath.Join(dir, "o.png"), filepath.Join(dir, "o.gif")
	for _, args := range [][]string{
		{"--obs", "10", "--png", png},
		{"--ref", "10", "--png", png},
		{"--obs", "10", "--ref", "10"},
		{"--obs", "10", "--ref", "10", "--png", png, "--width", "33"},
		{"--obs", "10", "--ref", "10", "--png", png, "--width", "16"},
		{"--obs", "10", "--ref", "10", "--png", filepath.Join(dir, "o.jpg")},
		{"--obs", "10", "--ref", "10", "--png", png, "--gif", gifOut},
		{"--obs", "10", "--ref", "10", "--png", png, "--steps", "3"},
		{"--obs", "10", "--ref", "0", "--png", png},
		{"--obs", "10", "--ref", "10", "--png", png, "--engine", "tpu"},
		{"--obs", "10", "--ref", "10", "--png", png, "--algo", "magic"},
		{"--obs", "10", "--ref", "10", "--png", png, "--bogus"},
		{"--simulate", "--obs", "10", "--ref", "10"},
		{"--simulate", "--grid", "--obs", "10", "--ref", "10", "--gif", gifOut},
		{"--simulate", "--grid", "--ref", "10", "--gif", gifOut, "--replace", "0.1"},
		{"--simulate", "--grid", "--ref", "10", "--gif", gifOut, "--frames", "0"},
		{"--simulate", "--grid", "--ref", "10", "--gif", gifOut, "--steps", "0"},
		{"--simulate", "--grid", "--ref", "10", "--gif", png},
		{"--simulate", "--grid", "--ref", "10", "--gif", gifOut, "--speed", "-1"},
	} {
		full := append([]string{"plot", "--engine", "cpu"}, args...)
		if _, _, err := runKnn(t, full...); err == nil {
			t.Errorf("%v: no error", args)
		}
		for _, p := range []string{png, gifOut} {
			if _, err := os.Stat(p); !os.IsNotExist(err) {
				t.Fatalf("%v: %s written", args, p)
			}
		}
	}
}

func TestEvenSteps(t *testing.T) {
	for _, tc := range []struct {
		n, k int
		want []int
	}{
		{5, 30, []int{1, 2, 3, 4, 5}}, {21, 5, []int{1, 6, 11, 16, 21}}, {10, 3, []int{1, 6, 10}}, {7, 1, []int{7}}, {100, 2, []int{1, 100}},
	} {
		got := evenSteps(tc.n, tc.k)
		if len(got) != len(tc.want) {
			t.Errorf("evenSteps(%d, %d) = %v, want %v", tc.n, tc.k, got, tc.want)
			continue
		}
		for _, s := range tc.want {
			if !got[s] {
				t.Errorf("evenSteps(%d, %d) = %v, want %v", tc.n, tc.k, got, tc.want)
			}
		}
	}
}
