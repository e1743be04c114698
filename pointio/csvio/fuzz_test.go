package csvio

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/internal/readertest"
)

func FuzzReadCSV(f *testing.F) {
	readertest.AddSamples(f, filepath.Join("..", "testdata"), ".csv")
	f.Fuzz(func(t *testing.T, data []byte) {
		pts, err := Read(bytes.NewReader(data), "fuzz.csv")
		readertest.CheckResult(t, pts, err)
		var ie *pointio.InputError
		if errors.As(err, &ie) && ie.Line < 0 {
			t.Fatalf("negative line in %v", err)
		}
	})
}
