package geojsonio_test

import (
	"fmt"
	"strings"

	"github.com/geoknn/geoknn/pointio/geojsonio"
)

func ExampleRead() {
	const doc = `{"type": "FeatureCollection", "features": [
  {"type": "Feature", "properties": {}, "geometry": {"type": "Point", "coordinates": [8.5403, 47.3779]}},
  {"type": "Feature", "properties": {}, "geometry": {"type": "MultiPoint", "coordinates": [[2.3553, 48.8809], [181, 0]]}}
]}`
	_, err := geojsonio.Read(strings.NewReader(doc), "stations.geojson")
	fmt.Println(err)
	// Output:
	// stations.geojson:3:3: feature 1: point 1: longitude 181 out of range [-180, 180]
}
