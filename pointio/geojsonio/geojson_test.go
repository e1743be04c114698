package geojsonio

import (
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/geoknn/geoknn/pointio"
	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geojson"
)

func TestReadGeoJSON(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []orb.Point
	}{
		{"bare Point", `{"type":"Point","coordinates":[8.5,47.3]}`, []orb.Point{{8.5, 47.3}}},
		{"bare Point with altitude", `{"type":"Point","coordinates":[8.5,47.3,408.2]}`, []orb.Point{{8.5, 47.3}}},
		{"bare MultiPoint", `{"type":"MultiPoint","coordinates":[[1,2],[3,4],[-180,-90]]}`,
			[]orb.Point{{1, 2}, {3, 4}, {-180, -90}}},
		{"bare Feature", `{"type":"Feature","properties":{"name":"x"},"geometry":{"type":"Point","coordinates":[1,2]}}`,
			[]orb.Point{{1, 2}}},
		{"Feature with MultiPoint", `{"type":"Feature","geometry":{"type":"MultiPoint","coordinates":[[1,2],[3,4]]},"properties":null}`,
			[]orb.Point{{1, 2}, {3, 4}}},
		{"FeatureCollection in order", `{"type":"FeatureCollection","features":[
			{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{}},
			{"type":"Feature","geometry":{"type":"MultiPoint","coordinates":[[3,4],[5,6]]},"properties":{}},
			{"type":"Feature","geometry":{"type":"MultiPoint","coordinates":[]},"properties":{}},
			{"type":"Feature","geometry":{"type":"Point","coordinates":[7,8]},"properties":{}}]}`,
			[]orb.Point{{1, 2}, {3, 4}, {5, 6}, {7, 8}}},
		{"members in any order, foreign members", `{"bbox":[0,0,1,1],"features":[{"geometry":{"coordinates":[1,2],"type":"Point"},"type":"Feature","id":"a"}],"name":"x","type":"FeatureCollection"}`,
			[]orb.Point{{1, 2}}},
		{"BOM and white space", "\uFEFF \n\t{\"type\":\"Point\",\"coordinates\":[1,2]}\n\n", []orb.Point{{1, 2}}},
		{"bounds", `{"type":"MultiPoint","coordinates":[[180,90],[-180,-90],[-0,0]]}`,
			[]orb.Point{{180, 90}, {-180, -90}, {0, 0}}},
		{"exponents", `{"type":"Point","coordinates":[1.5e2,-4.5E-1]}`, []orb.Point{{150, -0.45}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Read(strings.NewReader(tt.in), "t.geojson")
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestReadGeoJSONFromOrb checks that what orb/geojson writes reads back.
func TestReadGeoJSONFromOrb(t *testing.T) {
	fc := geojson.NewFeatureCollection()
	want := []orb.Point{{8.5403, 47.3779}, {-46.4731, -23.4356}, {139.6503, 35.6762}, {-68.303, -54.8019}}
	f := geojson.NewFeature(want[0])
	f.Properties["name"] = `Zürich, "HB"`
	fc.Append(f)
	fc.Append(geojson.NewFeature(orb.MultiPoint{want[1], want[2]}))
	fc.Append(geojson.NewFeature(want[3]))

	for name, v := range map[string]any{"collection": fc, "feature": fc.Features[1], "geometry": geojson.NewGeometry(orb.MultiPoint(want))} {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Read(strings.NewReader(string(data)), "orb.geojson")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		w := want
		if name == "feature" {
			w = want[1:3]
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("%s: got %v, want %v", name, got, w)
		}
	}
}

// geoLoc matches the line and column after the file name.
var geoLoc = regexp.MustCompile(`^t\.geojson(:\d+)(:\d+)`)

func TestReadGeoJSONErrors(t *testing.T) {
	point := func(coords string) string {
		return `{"type":"Feature","geometry":{"type":"Point","coordinates":` + coords + `},"properties":{}}`
	}
	collection := func(features ...string) string {
		return `{"type":"FeatureCollection","features":[` + strings.Join(features, ",") + `]}`
	}
	ok := point("[1,2]")

	tests := []struct {
		name     string
		in       string
		feature  int
		point    int
		line     int
		field    string
		contains []string
	}{
		{name: "longitude out of range", in: collection(ok, ok, point("[181,2]")), feature: 2, point: -1, field: "lon",
			contains: []string{"t.geojson: feature 2: longitude 181 out of range [-180, 180]"}},
		{name: "latitude out of range", in: collection(point("[1,-90.5]")), feature: 0, point: -1, field: "lat",
			contains: []string{"t.geojson: feature 0: latitude -90.5 out of range [-90, 90]"}},
		{name: "latitude out of range in MultiPoint", in: collection(ok,
			`{"type":"Feature","geometry":{"type":"MultiPoint","coordinates":[[1,2],[3,4],[5,95.25]]}}`),
			feature: 1, point: 2, field: "lat",
			contains: []string{"t.geojson: feature 1: point 2: latitude 95.25 out of range [-90, 90]"}},
		{name: "bare Point out of range", in: `{"type":"Point","coordinates":[-200,0]}`, feature: -1, point: -1, field: "lon",
			contains: []string{"t.geojson: longitude -200 out of range [-180, 180]"}},
		{name: "bare MultiPoint out of range", in: `{"type":"MultiPoint","coordinates":[[0,0],[0,1e300]]}`, feature: -1, point: 1, field: "lat",
			contains: []string{"t.geojson: point 1: latitude 1e+300 out of range [-90, 90]"}},
		{name: "number beyond float64", in: collection(ok, point("[1e400,0]")), feature: 1, point: -1,
			contains: []string{"t.geojson: feature 1: invalid Point coordinates", "1e400"}},
		{name: "string coordinate", in: collection(point(`["8.5",47]`)), feature: 0, point: -1,
			contains: []string{"t.geojson: feature 0: invalid Point coordinates", "string"}},
		{name: "position with one element", in: collection(ok, point("[10]")), feature: 1, point: -1,
			contains: []string{"t.geojson: feature 1: position has 1 element(s), want [longitude, latitude]"}},
		{name: "empty position", in: collection(point("[]")), feature: 0, point: -1,
			contains: []string{"feature 0: position has 0 element(s)"}},
		{name: "null coordinates", in: collection(point("null")), feature: 0, point: -1,
			contains: []string{"feature 0: position has 0 element(s)"}},
		{name: "short position in MultiPoint", in: `{"type":"MultiPoint","coordinates":[[1,2],[3]]}`, feature: -1, point: 1,
			contains: []string{"t.geojson: point 1: position has 1 element(s)"}},
		{name: "missing coordinates", in: collection(ok, `{"type":"Feature","geometry":{"type":"Point"}}`), feature: 1, point: -1,
			contains: []string{"feature 1: invalid Point coordinates", `no "coordinates" member`}},
		{name: "LineString", in: collection(ok, ok, ok,
			`{"type":"Feature","geometry":{"type":"LineString","coordinates":[[1,2],[3,4]]}}`), feature: 3, point: -1,
			contains: []string{`t.geojson: feature 3: unsupported geometry type "LineString", want Point or MultiPoint`}},
		{name: "Polygon", in: collection(`{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[0,1],[0,0]]]}}`),
			feature: 0, point: -1, contains: []string{`feature 0: unsupported geometry type "Polygon"`}},
		{name: "GeometryCollection", in: collection(ok, `{"type":"Feature","geometry":{"type":"GeometryCollection","geometries":[{"type":"Point","coordinates":[1,2]}]}}`),
			feature: 1, point: -1, contains: []string{`feature 1: unsupported geometry type "GeometryCollection"`}},
		{name: "unknown geometry type", in: collection(ok, `{"type":"Feature","geometry":{"type":"Circle","coordinates":[1,2]}}`),
			feature: 1, point: -1, contains: []string{`feature 1: unknown geometry type "Circle"`}},
		{name: "geometry type in wrong case", in: collection(`{"type":"Feature","geometry":{"type":"point","coordinates":[1,2]}}`),
			feature: 0, point: -1, contains: []string{`feature 0: unknown geometry type "point"`}},
		{name: "geometry without type", in: collection(`{"type":"Feature","geometry":{"coordinates":[1,2]}}`),
			feature: 0, point: -1, contains: []string{`feature 0: geometry has no "type" member`}},
		{name: "null geometry", in: collection(ok, `{"type":"Feature","geometry":null,"properties":{}}`), feature: 1, point: -1,
			contains: []string{"t.geojson: feature 1: geometry is null or missing"}},
		{name: "missing geometry", in: collection(`{"type":"Feature","properties":{}}`), feature: 0, point: -1,
			contains: []string{"feature 0: geometry is null or missing"}},
		{name: "bare Feature without geometry", in: `{"type":"Feature","geometry":null}`, feature: -1, point: -1,
			contains: []string{"t.geojson: geometry is null or missing"}},
		{name: "bare LineString", in: `{"type":"LineString","coordinates":[[1,2],[3,4]]}`, feature: -1, point: -1,
			contains: []string{`t.geojson: unsupported geometry type "LineString"`}},
		{name: "feature that is not a Feature", in: collection(ok, `{"type":"Point","coordinates":[1,2]}`), feature: 1, point: -1,
			contains: []string{`t.geojson: feature 1: type is "Point", want "Feature"`}},
		{name: "null feature", in: collection(ok, `null`), feature: 1, point: -1,
			contains: []string{`feature 1: type is "", want "Feature"`}},
		{name: "geometry of the wrong JSON type", in: collection(ok, ok, `{"type":"Feature","geometry":5}`), feature: 2, point: -1,
			contains: []string{"t.geojson: feature 2: invalid feature", "number"}},
		{name: "feature of the wrong JSON type", in: collection(ok, `[1,2]`), feature: 1, point: -1,
			contains: []string{"t.geojson: feature 1: invalid feature", "array"}},
		{name: "features not an array", in: `{"type":"FeatureCollection","features":{}}`, feature: -1, point: -1, line: 1,
			contains: []string{"t.geojson:1: invalid GeoJSON"}},
		{name: "top level array", in: "[\n{\"type\":\"Point\",\"coordinates\":[1,2]}]", feature: -1, point: -1, line: 1,
			contains: []string{"t.geojson:1: not a GeoJSON object"}},
		{name: "top level null", in: "null", feature: -1, point: -1,
			contains: []string{`t.geojson: not a GeoJSON object: no "type" member`}},
		{name: "no type", in: `{"features":[]}`, feature: -1, point: -1,
			contains: []string{`t.geojson: not a GeoJSON object: no "type" member`}},
		{name: "syntax error", in: "{\n  \"type\": \"Point\",\n  \"coordinates\": [1, 2,]\n}", feature: -1, point: -1, line: 3,
			contains: []string{"t.geojson:3: invalid JSON: invalid character ']'"}},
		{name: "truncated", in: "{\"type\":\"FeatureCollection\",\n\"features\":[", feature: -1, point: -1, line: 2,
			contains: []string{"t.geojson:2: invalid JSON: unexpected end of JSON input"}},
		{name: "trailing garbage", in: `{"type":"Point","coordinates":[1,2]} x`, feature: -1, point: -1, line: 1,
			contains: []string{"t.geojson:1: invalid JSON: invalid character 'x' after top-level value"}},
		{name: "empty collection", in: `{"type":"FeatureCollection","features":[]}`, feature: -1, point: -1,
			contains: []string{"t.geojson: no points"}},
		{name: "collection without features", in: `{"type":"FeatureCollection"}`, feature: -1, point: -1,
			contains: []string{"t.geojson: no points"}},
		{name: "empty MultiPoint", in: `{"type":"MultiPoint","coordinates":[]}`, feature: -1, point: -1,
			contains: []string{"t.geojson: no points"}},
		{name: "empty file", in: "", feature: -1, point: -1, contains: []string{"t.geojson: empty file"}},
		{name: "white space only", in: "\uFEFF \n\t", feature: -1, point: -1, contains: []string{"t.geojson: empty file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pts, err := Read(strings.NewReader(tt.in), "t.geojson")
			if err == nil {
				t.Fatalf("Read returned %v and no error", pts)
			}
			if pts != nil {
				t.Errorf("Read returned points %v with the error", pts)
			}
			var ie *pointio.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %q (%T) is not an *pointio.InputError", err, err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "t.geojson") {
				t.Errorf("error %q does not start with the file name", msg)
			}
			// Features and syntax errors carry a line and a column; the
			// table names the rest of the location.
			if tt.line > 0 {
				msg = geoLoc.ReplaceAllString(msg, "t.geojson$1")
			} else {
				msg = geoLoc.ReplaceAllString(msg, "t.geojson")
			}
			located := tt.line == 0 && tt.feature >= 0 && ie.Line > 0 && ie.Column > 0
			if ie.Feature != tt.feature || ie.Point != tt.point || (ie.Line != tt.line && !located) || ie.Field != tt.field {
				t.Errorf("Feature, Point, Line, Field = %d, %d, %d, %q; want %d, %d, %d, %q (error %q)",
					ie.Feature, ie.Point, ie.Line, ie.Field, tt.feature, tt.point, tt.line, tt.field, msg)
			}
			for _, s := range tt.contains {
				if !strings.Contains(msg, s) {
					t.Errorf("error %q does not contain %q", msg, s)
				}
			}
		})
	}
}

// A feature's error points at the line and column where it starts.
func TestGeoJSONErrorLineAndColumn(t *testing.T) {
	in := "{\"type\": \"FeatureCollection\", \"features\": [\n" +
		"  {\"type\":\"Feature\",\"geometry\":{\"type\":\"Point\",\"coordinates\":[1,2]}},\n" +
		"  {\"type\":\"Feature\",\"geometry\":{\"type\":\"Point\",\"coordinates\":[1,2]}},\n" +
		"    {\"type\":\"Feature\",\"geometry\":{\"type\":\"Point\",\"coordinates\":[181,2]}}\n]}"
	_, err := Read(strings.NewReader(in), "f.geojson")
	if err == nil || !strings.HasPrefix(err.Error(), "f.geojson:4:5: feature 2: longitude 181") {
		t.Errorf("error %v, want it at 4:5, feature 2", err)
	}
}
