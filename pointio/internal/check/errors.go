package check

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/geoknn/geoknn/pointio"
)

var BOM = []byte{0xEF, 0xBB, 0xBF}

// LineError returns an InputError about the CSV record on the given line.
func LineError(name string, line int, reason string) *pointio.InputError {
	return &pointio.InputError{File: name, Line: line, Feature: -1, Point: -1, Reason: reason}
}

// ReadError wraps an I/O error from reading the input.
func ReadError(name string, err error) error {
	var ie *pointio.InputError
	if errors.As(err, &ie) {
		return ie
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("read points: %w", err)
	}
	return fmt.Errorf("read points from %s: %w", name, err)
}

const (
	FieldLat = "lat"
	FieldLon = "lon"
)

// Reasons shared by both formats.
const (
	ReasonLatRange  = "out of range [-90, 90]"
	ReasonLonRange  = "out of range [-180, 180]"
	ReasonNotFinite = "is not a finite number"
	ReasonNaN       = "is not a number"
	ReasonEmpty     = "is empty"
	ReasonHex       = "is not a decimal number"
)

// FileError returns an InputError about the file as a whole.
func FileError(file, reason string) *pointio.InputError {
	return &pointio.InputError{File: file, Feature: -1, Point: -1, Reason: reason}
}
