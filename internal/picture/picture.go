package picture

// Pictures of decision regions: an equirectangular map of the Earth on
// which every observation is a pixel coloured by its nearest reference.
// Everything is drawn in palette indices, so one renderer serves paletted
// PNGs (small files) and GIF frames.

import (
	"bufio"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"math"
	"strings"

	"github.com/geoknn/geoknn"
)

// Palette entries.
const (
	palBackground     = iota // land and sea alike: no coastlines are drawn
	palGraticule             // the 30° graticule
	palBorder                // borders between regions
	palMarker                // reference markers and label text
	palHalo                  // around markers, label boxes, the gaps of a strip
	palGraticuleLight        // the graticule of a map without regions
	palSpecials              // first reference colour

	// refColours is the number of distinct reference colours; reference i
	// gets colour i mod refColours, in a strong form (observation points)
	// and a light one (filled regions).
	refColours = 124
	palStrong  = palSpecials
	palLight   = palStrong + refColours
	// palTransparent is the last entry, for GIF frames that only repaint
	// what changed; PNGs leave it out.
	palTransparent = palLight + refColours
)

var palette = makePalette()

func makePalette() color.Palette {
	p := make(color.Palette, palTransparent+1)
	p[palBackground] = color.RGBA{0xf4, 0xf3, 0xef, 0xff}
	p[palGraticule] = color.RGBA{0x9a, 0x9a, 0x9a, 0xff}
	p[palBorder] = color.RGBA{0x55, 0x55, 0x55, 0xff}
	p[palMarker] = color.RGBA{0x10, 0x10, 0x10, 0xff}
	p[palHalo] = color.RGBA{0xff, 0xff, 0xff, 0xff}
	p[palGraticuleLight] = color.RGBA{0xd4, 0xd4, 0xd0, 0xff}
	for k := range refColours {
		// Golden-ratio steps of hue: consecutive indices (often neighbours
		// in files sorted by region) get very different hues; three
		// levels of value and two of saturation separate equal hues.
		h := math.Mod(float64(k)*0.6180339887498949, 1)
		s := []float64{0.85, 0.65}[k%2]
		v := []float64{0.92, 0.72, 0.55}[k%3]
		r, g, b := hsv(h, s, v)
		p[palStrong+k] = color.RGBA{r, g, b, 0xff}
		// The light form mixes the strong one with white; it stays
		// distinct but lets borders, graticule and markers show.
		mix := func(c uint8) uint8 { return uint8(0.42*float64(c) + 0.58*255 + 0.5) }
		p[palLight+k] = color.RGBA{mix(r), mix(g), mix(b), 0xff}
	}
	p[palTransparent] = color.RGBA{}
	return p
}

func hsv(h, s, v float64) (r, g, b uint8) {
	i := math.Floor(h * 6)
	f := h*6 - i
	p, q, t := v*(1-s), v*(1-f*s), v*(1-(1-f)*s)
	var rf, gf, bf float64
	switch int(i) % 6 {
	case 0:
		rf, gf, bf = v, t, p
	case 1:
		rf, gf, bf = q, v, p
	case 2:
		rf, gf, bf = p, v, t
	case 3:
		rf, gf, bf = p, q, v
	case 4:
		rf, gf, bf = t, p, v
	default:
		rf, gf, bf = v, p, q
	}
	c := func(x float64) uint8 { return uint8(math.Round(255 * x)) }
	return c(rf), c(gf), c(bf)
}

// strongColour and lightColour are reference i's palette entries.
func strongColour(i uint32) uint8 { return uint8(palStrong + i%refColours) }
func lightColour(i uint32) uint8  { return uint8(palLight + i%refColours) }

// Canvas is an equirectangular map, w = 2h pixels, of palette indices.
type Canvas struct {
	w, h int
	pix  []uint8
}

func newCanvas(w int) *Canvas {
	c := &Canvas{w: w, h: w / 2, pix: make([]uint8, w*(w/2))}
	for i := range c.pix {
		c.pix[i] = palBackground
	}
	return c
}

// pixel returns the pixel that holds (lat, lon) radians.
func (c *Canvas) pixel(lat, lon float64) (x, y int) {
	x = int((lon + math.Pi) / (2 * math.Pi) * float64(c.w))
	y = int((math.Pi/2 - lat) / math.Pi * float64(c.h))
	return min(max(x, 0), c.w-1), min(max(y, 0), c.h-1)
}

func (c *Canvas) set(x, y int, v uint8) {
	if y >= 0 && y < c.h {
		x = (x%c.w + c.w) % c.w // wrap across the antimeridian
		c.pix[y*c.w+x] = v
	}
}

// GridPoints returns the centres of a w x w/2 map's pixels, row by row from
// the north, as radian columns: the observations of a --grid picture.
func GridPoints(w int) geoknn.Points {
	h := w / 2
	lat, lon := make([]float64, w*h), make([]float64, w*h)
	for y := range h {
		la := math.Pi/2 - (float64(y)+0.5)/float64(h)*math.Pi
		for x := range w {
			lat[y*w+x] = la
			lon[y*w+x] = (float64(x)+0.5)/float64(w)*2*math.Pi - math.Pi
		}
	}
	return geoknn.Radians64(lat, lon)
}

// fillRegions paints every pixel with the light colour of its nearest
// reference (index holds one entry per pixel, as GridPoints orders them)
// and darkens the borders between regions.
func (c *Canvas) fillRegions(index []uint32) {
	for i, r := range index {
		c.pix[i] = lightColour(r)
	}
	// A pixel is on a border when its right or lower neighbour (wrapping
	// across the antimeridian) belongs to another reference.
	for y := range c.h {
		row := index[y*c.w : (y+1)*c.w]
		for x := range c.w {
			r := row[x]
			if row[(x+1)%c.w] != r || (y+1 < c.h && index[(y+1)*c.w+x] != r) {
				c.pix[y*c.w+x] = palBorder
			}
		}
	}
}

// graticule draws the parallels and meridians every 30°: dotted over
// filled regions, solid on an empty map.
func (c *Canvas) graticule(dotted bool) {
	step, v := 1, uint8(palGraticuleLight)
	if dotted {
		step, v = 3, palGraticule
	}
	for k := 0; k <= 12; k++ { // meridians
		x := min(int(float64(k)/12*float64(c.w)), c.w-1)
		for y := 0; y < c.h; y += step {
			c.graticulePixel(x, y, v)
		}
	}
	for k := 0; k <= 6; k++ { // parallels
		y := min(int(float64(k)/6*float64(c.h)), c.h-1)
		for x := 0; x < c.w; x += step {
			c.graticulePixel(x, y, v)
		}
	}
}

func (c *Canvas) graticulePixel(x, y int, v uint8) {
	if p := &c.pix[y*c.w+x]; *p != palBorder {
		*p = v
	}
}

// points draws every observation in its reference's strong colour: as a
// 2x2 dot when big, else as one pixel.
func (c *Canvas) points(obs geoknn.Points, index []uint32, big bool) {
	for i := range index {
		x, y := c.pixel(obs.At(i))
		v := strongColour(index[i])
		c.pix[y*c.w+x] = v
		if big {
			c.set(x+1, y, v)
			c.set(x, y+1, v)
			c.set(x+1, y+1, v)
		}
	}
}

// markers draws the references: a dark 3x3 dot in a white ring where a
// reference stands alone, a dark pixel where references crowd (another
// within about 6 to 12 pixels), so that dense areas stay readable.
func (c *Canvas) markers(ref geoknn.Points) {
	const cell = 6
	cw, ch := c.w/cell+1, c.h/cell+1
	count := make([]int32, cw*ch)
	xs, ys := make([]int, ref.Len()), make([]int, ref.Len())
	for i := range ref.Len() {
		xs[i], ys[i] = c.pixel(ref.At(i))
		count[ys[i]/cell*cw+xs[i]/cell]++
	}
	alone := func(x, y int) bool {
		n := int32(0)
		for dy := -1; dy <= 1; dy++ {
			for dx := -1; dx <= 1; dx++ {
				cx, cy := (x/cell+dx+cw)%cw, y/cell+dy
				if cy >= 0 && cy < ch {
					n += count[cy*cw+cx]
				}
			}
		}
		return n == 1
	}
	for i := range ref.Len() {
		if x, y := xs[i], ys[i]; alone(x, y) {
			c.dot(x, y)
		} else {
			c.set(x, y, palMarker)
		}
	}
}

// dot draws a lone reference at (x, y): a dark 3x3 dot in a white ring
// with its corners cut.
func (c *Canvas) dot(x, y int) {
	for dy := -2; dy <= 2; dy++ {
		for dx := -2; dx <= 2; dx++ {
			if abs(dx) == 2 && abs(dy) == 2 {
				continue
			}
			v := uint8(palHalo)
			if abs(dx) <= 1 && abs(dy) <= 1 {
				v = palMarker
			}
			c.set(x+dx, y+dy, v)
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// label writes text in the top left corner, black on a white box, in the
// 5x7 font scaled by the map's size.
func (c *Canvas) label(text string) {
	scale := 1
	if c.w >= 400 {
		scale = max(2, c.w/400)
	}
	x0, y0 := 4*scale, 4*scale
	width := (len(text)*6 + 4) * scale
	for y := y0; y < y0+10*scale; y++ {
		for x := x0; x < x0+width; x++ {
			c.set(x, y, palHalo)
		}
	}
	for k, ch := range text {
		g, ok := font[ch]
		if !ok {
			continue
		}
		for gy, row := range g {
			for gx, b := range row {
				if b != '#' {
					continue
				}
				for sy := range scale {
					for sx := range scale {
						c.set(x0+(2+6*k+gx)*scale+sx, y0+(2+gy)*scale+sy, palMarker)
					}
				}
			}
		}
	}
}

// font is a 5x7 bitmap font for the labels of simulation frames.
var font = map[rune][7]string{
	'0': {".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."},
	'1': {"..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."},
	'2': {".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"},
	'3': {"#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."},
	'4': {"...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."},
	'5': {"#####", "#....", "####.", "....#", "....#", "#...#", ".###."},
	'6': {"..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."},
	'7': {"#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."},
	'8': {".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."},
	'9': {".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."},
	' ': {".....", ".....", ".....", ".....", ".....", ".....", "....."},
	'=': {".....", ".....", "#####", ".....", "#####", ".....", "....."},
	'.': {".....", ".....", ".....", ".....", ".....", ".##..", ".##.."},
	'd': {"....#", "....#", ".##.#", "#..##", "#...#", "#...#", ".####"},
	'h': {"#....", "#....", "#.##.", "##..#", "#...#", "#...#", "#...#"},
	'i': {"..#..", ".....", ".##..", "..#..", "..#..", "..#..", ".###."},
	'm': {".....", ".....", "##.#.", "#.#.#", "#.#.#", "#...#", "#...#"},
	'n': {".....", ".....", "#.##.", "##..#", "#...#", "#...#", "#...#"},
	's': {".....", ".....", ".####", "#....", ".###.", "....#", "####."},
	't': {"..#..", "..#..", "#####", "..#..", "..#..", "..#.#", "...#."},
}

// SimTime formats simulated seconds for a frame label: "t = 0 s",
// "t = 45 min", "t = 2.5 h", "t = 3.2 d".
func SimTime(s float64) string {
	trim := func(v float64) string {
		return strings.TrimSuffix(fmt.Sprintf("%.1f", v), ".0")
	}
	switch a := math.Abs(s); {
	case a < 120:
		return "t = " + trim(s) + " s"
	case a < 2*3600:
		return "t = " + trim(s/60) + " min"
	case a < 2*86400:
		return "t = " + trim(s/3600) + " h"
	}
	return "t = " + trim(s/86400) + " d"
}

// image returns the canvas as a paletted image (sharing its pixels).
func (c *Canvas) image(pal color.Palette) *image.Paletted {
	return &image.Paletted{Pix: c.pix, Stride: c.w, Rect: image.Rect(0, 0, c.w, c.h), Palette: pal}
}

// pngPalette is the palette without the transparent entry.
func pngPalette() color.Palette { return palette[:palTransparent] }

func WritePNG(w *bufio.Writer, img image.Image) error {
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	return enc.Encode(w, img)
}

// Strip lays frames side by side, separated by white gaps.
func Strip(frames []*Canvas) *Canvas {
	const gap = 6
	fw, fh := frames[0].w, frames[0].h
	w := len(frames)*fw + (len(frames)-1)*gap
	c := &Canvas{w: w, h: fh, pix: make([]uint8, w*fh)}
	for i := range c.pix {
		c.pix[i] = palHalo
	}
	for k, f := range frames {
		for y := range fh {
			copy(c.pix[y*w+k*(fw+gap):], f.pix[y*fw:(y+1)*fw])
		}
	}
	return c
}

// Animation assembles GIF frames. After the first, each frame is only the
// rectangle that changed since the one before, with unchanged pixels
// transparent, drawn over it (DisposalNone): regions move a little per
// step, so this keeps the file small.
type Animation struct {
	g    gif.GIF
	prev []uint8
	w, h int
}

func (a *Animation) Add(c *Canvas, delay int) {
	if a.prev == nil {
		a.w, a.h = c.w, c.h
		a.prev = append([]uint8(nil), c.pix...)
		a.g.Image = append(a.g.Image, c.image(palette))
		a.g.Delay = append(a.g.Delay, delay)
		a.g.Disposal = append(a.g.Disposal, gif.DisposalNone)
		a.g.Config = image.Config{ColorModel: palette, Width: c.w, Height: c.h}
		return
	}
	x0, y0, x1, y1 := c.w, c.h, 0, 0
	for y := range c.h {
		for x := range c.w {
			if c.pix[y*c.w+x] != a.prev[y*c.w+x] {
				x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x+1), max(y1, y+1)
			}
		}
	}
	if x0 >= x1 { // nothing changed: one transparent pixel
		x0, y0, x1, y1 = 0, 0, 1, 1
	}
	r := image.Rect(x0, y0, x1, y1)
	img := image.NewPaletted(r, palette)
	for y := y0; y < y1; y++ {
		for x := x0; x < x1; x++ {
			v := c.pix[y*c.w+x]
			if v == a.prev[y*c.w+x] {
				v = palTransparent
			}
			img.Pix[(y-y0)*img.Stride+(x-x0)] = v
		}
	}
	copy(a.prev, c.pix)
	a.g.Image = append(a.g.Image, img)
	a.g.Delay = append(a.g.Delay, delay)
	a.g.Disposal = append(a.g.Disposal, gif.DisposalNone)
}

func (a *Animation) Encode(w *bufio.Writer) error {
	if len(a.g.Delay) > 0 {
		a.g.Delay[len(a.g.Delay)-1] *= 4 // rest on the last frame
	}
	return gif.EncodeAll(w, &a.g)
}
