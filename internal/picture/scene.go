package picture

import (
	"image"

	"github.com/geoknn/geoknn"
)

// Scene is what one picture shows, in the order it is drawn.
type Scene struct {
	// Width is the picture's width in pixels, even; the height is half.
	Width int
	// Regions holds the nearest reference of every pixel centre, in
	// GridPoints(Width) order; nil draws no regions.
	Regions []uint32
	// Obs are observations drawn over the regions, ObsIndex their nearest
	// references; Obs may be empty.
	Obs      geoknn.Points
	ObsIndex []uint32
	// Ref are the references, drawn as dark dots.
	Ref geoknn.Points
	// Label, if not empty, is written in the picture's corner.
	Label string
}

// Draw draws s: the regions with a bold graticule, or a dotted graticule
// alone, then the observations and the references.
func Draw(s Scene) *Canvas {
	c := newCanvas(s.Width)
	if s.Regions != nil {
		c.fillRegions(s.Regions)
		c.graticule(true)
	} else {
		c.graticule(false)
	}
	if s.Obs.Len() > 0 {
		// Few points on an empty map are 2x2 dots; over regions, pixels.
		c.points(s.Obs, s.ObsIndex, s.Regions == nil && s.Obs.Len() <= c.w*c.h/8)
	}
	c.markers(s.Ref)
	if s.Label != "" {
		c.label(s.Label)
	}
	return c
}

// Size returns the canvas's width and height in pixels.
func (c *Canvas) Size() (w, h int) { return c.w, c.h }

// PNGImage returns the canvas as a paletted image for a PNG (sharing its
// pixels).
func (c *Canvas) PNGImage() *image.Paletted { return c.image(pngPalette()) }

// Frames returns the number of frames added.
func (a *Animation) Frames() int { return len(a.g.Image) }

// IsRegionColour reports whether palette index v is the colour of some
// reference's region.
func IsRegionColour(v uint8) bool { return v >= palLight && v < palLight+refColours }
