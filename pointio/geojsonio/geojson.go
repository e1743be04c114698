package geojsonio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/internal/check"
	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geojson"
)

// GeoJSON object types other than geometries (RFC 7946 section 1.4).
const (
	typeFeature            = "Feature"
	typeFeatureCollection  = "FeatureCollection"
	typeGeometryCollection = "GeometryCollection"
)

// Read reads points from GeoJSON (RFC 7946). name identifies the
// input in errors, typically the file name.
//
// The input is a FeatureCollection, a single Feature, or a bare Point or
// MultiPoint geometry. Each feature's geometry must be a Point or a
// MultiPoint; its positions contribute points in document order. Any other
// geometry type, or a feature with a null geometry, is an error naming the
// 0-based feature index, because skipping it would silently shift the
// numbering of the points that follow. Positions are [longitude, latitude]
// in degrees; further elements (altitude) are ignored, and positions with
// fewer than two elements are an error.
//
// Every point is validated as in Read; errors are *InputError values
// carrying the feature and point indexes.
//
// The whole input is held in memory while it is decoded.
func Read(r io.Reader, name string) ([]orb.Point, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, check.ReadError(name, err)
	}
	pts, _, err := Decode(data, name, "")
	return pts, err
}

// gjGeometry holds a GeoJSON geometry with its coordinates still encoded,
// because their shape depends on the type.
type gjGeometry struct {
	Type        string          `json:"type"`
	Coordinates json.RawMessage `json:"coordinates"`
}

type gjFeature struct {
	Type     string      `json:"type"`
	Geometry *gjGeometry `json:"geometry"`
	// The feature's identifier and properties, kept encoded: they are
	// read only when an id column is asked for.
	ID         json.RawMessage `json:"id"`
	Properties json.RawMessage `json:"properties"`
}

// gjDocument holds the members of any top-level GeoJSON object this package
// reads.
type gjDocument struct {
	Type        string          `json:"type"`
	Features    []gjFeature     `json:"features"`
	Geometry    *gjGeometry     `json:"geometry"`
	Coordinates json.RawMessage `json:"coordinates"`
}

// Decode reads points from the GeoJSON document in data; name
// identifies the input in errors.
// With idColumn set it also returns, a point each, the features' "id"
// member (idColumn "id") or that property, as text.
func Decode(data []byte, name, idColumn string) ([]orb.Point, []string, error) {
	doc, err := parseDocument(data, name)
	if err != nil {
		return nil, nil, locateFeature(data, err)
	}
	pts, err := documentPoints(doc, name)
	if err != nil {
		return nil, nil, locateFeature(data, err)
	}
	if len(pts) == 0 {
		return nil, nil, check.FileError(name, "no points")
	}
	if idColumn == "" {
		return pts, nil, nil
	}
	if doc.Type != typeFeatureCollection {
		return nil, nil, check.FileError(name, "ids (--obs-id, --ref-id) come from the features of a FeatureCollection")
	}
	ids, err := featureIDs(doc.Features, idColumn, name)
	if err != nil {
		return nil, nil, err
	}
	return pts, ids, nil
}

// featureIDs returns each point's feature id or property idColumn, as
// text (a string's characters, other values as written; null or absent:
// ""); a MultiPoint's points share their feature's.
func featureIDs(features []gjFeature, idColumn, name string) ([]string, error) {
	var ids []string
	for i := range features {
		f := &features[i]
		raw := f.ID
		if idColumn != "id" || len(raw) == 0 {
			var props map[string]json.RawMessage
			if len(f.Properties) > 0 && string(f.Properties) != "null" {
				if err := json.Unmarshal(f.Properties, &props); err != nil {
					return nil, geoError(name, i, -1, "properties is not an object", err)
				}
			}
			raw = props[idColumn]
		}
		id := jsonText(raw)
		n, err := featurePoints(f)
		if err != nil {
			return nil, geoError(name, i, -1, "coordinates", err)
		}
		for range n {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// jsonText is a JSON value as text: a string's characters, anything else
// as written, null or nothing as "".
func jsonText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if t := strings.TrimSpace(string(raw)); t != "null" {
		return t
	}
	return ""
}

// featurePoints is the number of points a feature gave (its geometry was
// read already).
func featurePoints(f *gjFeature) (int, error) {
	if f.Geometry == nil || f.Geometry.Type != "MultiPoint" {
		return 1, nil
	}
	var coords []json.RawMessage
	err := json.Unmarshal(f.Geometry.Coordinates, &coords)
	return len(coords), err
}

// parseDocument decodes the top-level GeoJSON object in data. When that
// fails it names the offending feature if it can, and the line otherwise.
func parseDocument(data []byte, name string) (*gjDocument, error) {
	data = bytes.TrimPrefix(data, check.BOM)
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, check.FileError(name, "empty file: want a GeoJSON object")
	}
	var doc gjDocument
	if err := json.Unmarshal(data, &doc); err != nil {
		if fe := findFeatureError(data, name); fe != nil {
			return nil, fe
		}
		return nil, jsonError(name, data, err)
	}
	return &doc, nil
}

// documentPoints returns the points of doc, whichever kind of object it is.
func documentPoints(doc *gjDocument, name string) ([]orb.Point, error) {
	var buf []float64 // reused for the positions of Points
	switch doc.Type {
	case typeFeatureCollection:
		return appendFeatures(doc.Features, name)
	case typeFeature:
		return appendGeometry(nil, &buf, doc.Geometry, name, -1)
	case "":
		return nil, check.FileError(name, `not a GeoJSON object: no "type" member`)
	default:
		g := &gjGeometry{Type: doc.Type, Coordinates: doc.Coordinates}
		return appendGeometry(nil, &buf, g, name, -1)
	}
}

// appendFeatures returns the points of the features of a FeatureCollection,
// in order.
func appendFeatures(features []gjFeature, name string) ([]orb.Point, error) {
	pts := make([]orb.Point, 0, len(features))
	var buf []float64 // reused for the positions of Points
	for i := range features {
		f := &features[i]
		if f.Type != typeFeature {
			return nil, geoError(name, i, -1, fmt.Sprintf("type is %q, want %q", f.Type, typeFeature), nil)
		}
		var err error
		if pts, err = appendGeometry(pts, &buf, f.Geometry, name, i); err != nil {
			return nil, err
		}
	}
	return pts, nil
}

// appendGeometry appends the positions of g to pts. feature is the index
// of the feature holding g, or -1. buf is scratch space for decoding.
func appendGeometry(pts []orb.Point, buf *[]float64, g *gjGeometry, name string, feature int) ([]orb.Point, error) {
	if g == nil {
		return nil, geoError(name, feature, -1, "geometry is null or missing, want a Point or MultiPoint", nil)
	}
	switch g.Type {
	case geojson.TypePoint:
		return appendPoint(pts, buf, g.Coordinates, name, feature)
	case geojson.TypeMultiPoint:
		return appendMultiPoint(pts, g.Coordinates, name, feature)
	}
	return nil, geometryTypeError(g.Type, name, feature)
}

// appendPoint appends the position a Point's coordinates hold to pts,
// decoding it into buf.
func appendPoint(pts []orb.Point, buf *[]float64, coords json.RawMessage, name string, feature int) ([]orb.Point, error) {
	// Decoding into a slice reuses its storage.
	if err := unmarshalCoordinates(coords, buf); err != nil {
		return nil, geoError(name, feature, -1, "invalid Point coordinates", friendlyJSONError(err))
	}
	p, err := position(*buf, name, feature, -1)
	if err != nil {
		return nil, err
	}
	return append(pts, p), nil
}

// appendMultiPoint appends the positions a MultiPoint's coordinates hold to
// pts.
func appendMultiPoint(pts []orb.Point, coords json.RawMessage, name string, feature int) ([]orb.Point, error) {
	var mp [][]float64
	if err := unmarshalCoordinates(coords, &mp); err != nil {
		return nil, geoError(name, feature, -1, "invalid MultiPoint coordinates", friendlyJSONError(err))
	}
	pts = growPoints(pts, len(mp))
	for j, pos := range mp {
		p, err := position(pos, name, feature, j)
		if err != nil {
			return nil, err
		}
		pts = append(pts, p)
	}
	return pts, nil
}

// geometryTypeError reports a geometry of a type other than Point and
// MultiPoint, telling unsupported GeoJSON types from unknown ones.
func geometryTypeError(typ, name string, feature int) *pointio.InputError {
	switch typ {
	case geojson.TypeLineString, geojson.TypeMultiLineString, geojson.TypePolygon,
		geojson.TypeMultiPolygon, typeGeometryCollection:
		return geoError(name, feature, -1,
			fmt.Sprintf("unsupported geometry type %q, want Point or MultiPoint", typ), nil)
	case "":
		return geoError(name, feature, -1, `geometry has no "type" member`, nil)
	default:
		return geoError(name, feature, -1,
			fmt.Sprintf("unknown geometry type %q, want Point or MultiPoint", typ), nil)
	}
}

// unmarshalCoordinates decodes a "coordinates" member into v.
func unmarshalCoordinates(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return errors.New(`no "coordinates" member`)
	}
	return json.Unmarshal(raw, v)
}

// position validates a GeoJSON position and converts it to a point.
func position(pos []float64, name string, feature, point int) (orb.Point, error) {
	if len(pos) < 2 {
		return orb.Point{}, geoError(name, feature, point,
			fmt.Sprintf("position has %d element(s), want [longitude, latitude]", len(pos)), nil)
	}
	lon, lat := pos[0], pos[1]
	if reason := check.RangeReason(lon, 180); reason != "" {
		return orb.Point{}, coordError(name, feature, point, check.FieldLon, lon, reason)
	}
	if reason := check.RangeReason(lat, 90); reason != "" {
		return orb.Point{}, coordError(name, feature, point, check.FieldLat, lat, reason)
	}
	return orb.Point{lon, lat}, nil
}

func growPoints(pts []orb.Point, n int) []orb.Point {
	if n > cap(pts)-len(pts) {
		grown := make([]orb.Point, len(pts), len(pts)+max(n, len(pts)))
		copy(grown, pts)
		return grown
	}
	return pts
}

func geoError(name string, feature, point int, reason string, err error) *pointio.InputError {
	return &pointio.InputError{File: name, Feature: feature, Point: point, Reason: reason, Err: err}
}

func coordError(name string, feature, point int, field string, v float64, reason string) *pointio.InputError {
	return &pointio.InputError{
		File: name, Feature: feature, Point: point,
		Field: field, Value: strconv.FormatFloat(v, 'g', -1, 64), Reason: reason,
	}
}

// findFeatureError decodes the features of a FeatureCollection one by one
// to find which of them made decoding the whole document fail. It returns
// nil if the failure was elsewhere.
func findFeatureError(data []byte, name string) *pointio.InputError {
	var doc struct {
		Type     string            `json:"type"`
		Features []json.RawMessage `json:"features"`
	}
	if json.Unmarshal(data, &doc) != nil || doc.Type != typeFeatureCollection {
		return nil
	}
	for i, raw := range doc.Features {
		var f gjFeature
		if err := json.Unmarshal(raw, &f); err != nil {
			return geoError(name, i, -1, "invalid feature", friendlyJSONError(err))
		}
	}
	return nil
}

// jsonError converts an error from decoding the whole document, adding the
// line number where encoding/json reports an offset.
func jsonError(name string, data []byte, err error) error {
	e := check.FileError(name, "invalid JSON")
	e.Err = friendlyJSONError(err)
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		e.Line, e.Column = lineAt(data, se.Offset), columnAt(data, se.Offset)
	case errors.As(err, &te):
		e.Line, e.Column = lineAt(data, te.Offset), columnAt(data, te.Offset)
		e.Reason = "invalid GeoJSON"
		if te.Field == "" {
			e.Reason = "not a GeoJSON object"
		}
	}
	return e
}

// jsonTypeError describes a *json.UnmarshalTypeError in GeoJSON terms
// rather than in terms of this package's Go types.
type jsonTypeError struct {
	msg string
	err *json.UnmarshalTypeError
}

func (e *jsonTypeError) Error() string { return e.msg }
func (e *jsonTypeError) Unwrap() error { return e.err }

// friendlyJSONError rewrites type errors from encoding/json, which name Go
// types, into messages about the JSON input. Other errors are returned as
// they are.
func friendlyJSONError(err error) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err
	}
	var msg string
	switch {
	case strings.HasPrefix(te.Value, "number "):
		// A number that does not fit the Go type, such as 1e400.
		msg = fmt.Sprintf("%s does not fit in a 64-bit float", te.Value)
	case te.Field == "":
		msg = fmt.Sprintf("found %s %s, want %s", article(te.Value), te.Value, jsonKind(te.Type))
	default:
		msg = fmt.Sprintf("member %q is %s %s, want %s", te.Field, article(te.Value), te.Value, jsonKind(te.Type))
	}
	return &jsonTypeError{msg: msg, err: te}
}

// jsonKind names the JSON value that decodes into t.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return jsonKind(t.Elem())
	case reflect.Slice, reflect.Array:
		if t == reflect.TypeFor[json.RawMessage]() {
			return "any value"
		}
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int64, reflect.Uint32:
		return "a number"
	case reflect.Bool:
		return "a boolean"
	}
	return "another value"
}

func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

// lineAt returns the 1-based line holding the byte at offset (or just
// before it, as encoding/json offsets point past the offending byte).
// locateFeature adds the line and column where an error's feature starts,
// so that a GeoJSON error points into the file as a CSV one does.
func locateFeature(data []byte, err error) error {
	var ie *pointio.InputError
	if !errors.As(err, &ie) || ie.Feature < 0 || ie.Line > 0 {
		return err
	}
	if off, ok := featureOffset(data, ie.Feature); ok {
		ie.Line, ie.Column = lineAt(data, off+1), columnAt(data, off+1)
	}
	return err
}

// featureOffset is the byte offset where element k of the top-level
// object's "features" array starts.
func featureOffset(data []byte, k int) (int64, bool) {
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, check.BOM)))
	skew := int64(len(data) - len(bytes.TrimPrefix(data, check.BOM)))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return 0, false
		}
		if key != "features" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return 0, false
			}
			continue
		}
		return elementOffset(dec, k, skew)
	}
	return 0, false
}

// elementOffset walks the array dec is at to element k.
func elementOffset(dec *json.Decoder, k int, skew int64) (int64, bool) {
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return 0, false
	}
	for i := 0; dec.More(); i++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return 0, false
		}
		if i == k {
			end := dec.InputOffset()
			return skew + end - int64(len(raw)), true
		}
	}
	return 0, false
}

// columnAt is the 1-based column (in bytes) of the byte before offset, as
// lineAt counts lines.
func columnAt(data []byte, offset int64) int {
	if offset > 0 {
		offset--
	}
	offset = min(max(offset, 0), int64(len(data)))
	return int(offset) - bytes.LastIndexByte(data[:offset], '\n')
}

func lineAt(data []byte, offset int64) int {
	if offset > 0 {
		offset--
	}
	offset = min(max(offset, 0), int64(len(data)))
	return bytes.Count(data[:offset], []byte{'\n'}) + 1
}
