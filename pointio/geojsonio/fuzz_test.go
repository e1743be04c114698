package geojsonio

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/geoknn/geoknn/pointio/internal/readertest"
)

func FuzzReadGeoJSON(f *testing.F) {
	readertest.AddSamples(f, filepath.Join("..", "testdata"), ".geojson")
	f.Fuzz(func(t *testing.T, data []byte) {
		pts, err := Read(bytes.NewReader(data), "fuzz.geojson")
		readertest.CheckResult(t, pts, err)
	})
}
