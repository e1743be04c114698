// Package picture draws the decision regions of the nearest-reference
// query for `knn plot`: an equirectangular map of the Earth, w x w/2
// pixels with a 30° graticule, on which every observation is a pixel in
// the colour of its nearest reference (a fixed colour per reference
// index, modulo 124) and the references are dark dots.
//
// # Contract
//
// A Scene holds answers already computed (the package runs no query):
// the nearest reference of every pixel centre of GridPoints, which fills
// the regions (spherical Voronoi cells) with their borders, and/or
// observations with theirs, and the references. Draw turns it into a
// Canvas of palette indices, so one renderer serves paletted PNGs (small
// files, WritePNG) and GIF frames (Animation, which stores each frame
// after the first as the rectangle that changed). Strip lays canvases side
// by side. Nothing here writes a file: the caller owns the output and its
// guard against partial writes.
package picture
