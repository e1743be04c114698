package numpyio

import (
	"fmt"
	"os"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/internal/check"
	"github.com/paulmach/orb"
)

// ReadNPZFile reads the points of the NumPy archive at path (zip reads it
// from its end, so never from standard input): its lat and lon arrays,
// or its one (N, 2) array, named as opts says.
func ReadNPZFile(path string, opts pointio.ReadOptions) ([]orb.Point, error) {
	if path == "-" {
		return nil, check.FileError("standard input", "a .npz archive from standard input: give the file's name")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read points: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read points: %w", err)
	}
	return readNPZ(f, fi.Size(), path, opts)
}
