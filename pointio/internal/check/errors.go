package check

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/geoknn/geoknn/pointio"
)

// BOM is the UTF-8 byte order mark that text readers skip.
var BOM = []byte{0xEF, 0xBB, 0xBF}

// The fields of an InputError about a coordinate's value.
const (
	FieldLat = "lat"
	FieldLon = "lon"
)

// Reasons every reader gives for a bad coordinate, so that a value is
// refused in the same words whatever the format.
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

// LineError returns an InputError about the text record on the given
// line.
func LineError(name string, line int, reason string) *pointio.InputError {
	return &pointio.InputError{File: name, Line: line, Feature: -1, Point: -1, Reason: reason}
}

// ReadError wraps an I/O error from reading the input: an InputError as
// it is, an error naming the file (a *fs.PathError) as "read points",
// any other as "read points from name".
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
