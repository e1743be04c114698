package pointio

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/paulmach/orb"
)

// addSamples adds the sample files with the given extension to the corpus.
func addSamples(f *testing.F, ext string) {
	paths, _ := filepath.Glob(filepath.Join(testdata, "*"+ext))
	for _, p := range paths {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
}

// checkResult checks the contract shared by the readers: either valid
// points or an error, never both, and content errors are *InputErrors.
func checkResult(t *testing.T, pts []orb.Point, err error) {
	t.Helper()
	if err != nil {
		if pts != nil {
			t.Fatalf("points %v returned with error %v", pts, err)
		}
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Fatalf("error %q (%T) is not an *InputError", err, err)
		}
		if ie.Error() == "" || ie.Reason == "" {
			t.Fatalf("error without a reason: %#v", ie)
		}
		return
	}
	if len(pts) == 0 {
		t.Fatal("no points and no error")
	}
	for i, p := range pts {
		lon, lat := p.Lon(), p.Lat()
		if math.IsNaN(lon) || math.IsNaN(lat) || lon < -180 || lon > 180 || lat < -90 || lat > 90 {
			t.Fatalf("point %d = %v is not a valid coordinate", i, p)
		}
	}
}

func FuzzReadCSV(f *testing.F) {
	addSamples(f, ".csv")
	f.Fuzz(func(t *testing.T, data []byte) {
		pts, err := ReadCSV(bytes.NewReader(data), "fuzz.csv")
		checkResult(t, pts, err)
		var ie *InputError
		if errors.As(err, &ie) && ie.Line < 0 {
			t.Fatalf("negative line in %v", err)
		}
	})
}

func FuzzReadGeoJSON(f *testing.F) {
	addSamples(f, ".geojson")
	f.Fuzz(func(t *testing.T, data []byte) {
		pts, err := ReadGeoJSON(bytes.NewReader(data), "fuzz.geojson")
		checkResult(t, pts, err)
	})
}
