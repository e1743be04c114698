// Package realdata finds the real point sets the tests run on: the full
// GeoNames cities and OpenFlights airports of the shared data folder beside
// the checkout when it is there (or the folder GEOKNN_DATA names), else the
// small attributed sample the repository carries in testdata/realdata, so
// the real-data tests always run.
package realdata

import (
	"errors"
	"os"
	"path/filepath"
)

// Dir returns the folder holding cities.csv and airports.csv, and whether it
// is the full shared set (false: the repository's sample).
func Dir() (dir string, full bool, err error) {
	if env := os.Getenv("GEOKNN_DATA"); env != "" {
		return env, true, nil
	}
	root, err := moduleRoot()
	if err != nil {
		return "", false, err
	}
	shared := filepath.Join(root, "..", "shared", "data")
	if _, err := os.Stat(filepath.Join(shared, "cities.csv")); err == nil {
		return shared, true, nil
	}
	return filepath.Join(root, "testdata", "realdata"), false, nil
}

// moduleRoot is the nearest folder upwards from the working directory (a
// test's package folder) that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("realdata: no go.mod above the working directory")
		}
		dir = parent
	}
}
