// Package geojsonio reads points from GeoJSON (RFC 7946) text.
//
// Read and Decode take a FeatureCollection whose features have Point or
// MultiPoint geometries, a single such Feature, or a bare Point or
// MultiPoint, and return the points in document order, a MultiPoint's
// positions one point each (altitudes ignored). Every position is
// checked and the first problem is returned as a *pointio.InputError
// naming the feature, the MultiPoint position and, for syntax errors and
// features at fault, the line and column:
//
//	stations.geojson:3:3: feature 1: point 1: longitude 181 out of range [-180, 180]
//
// Decode also returns a feature's "id" member, or one of its properties,
// for each point, to carry into the answers. A document is read whole.
// Package pointio/formats chooses this reader for .geojson and .json
// files and for text that starts with '{'.
package geojsonio
