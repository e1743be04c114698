// Package check holds what every point reader checks and how it says
// what is wrong: coordinates parsed and bounded (Coord, RangeReason), and
// the *pointio.InputErrors about a file, a line or a read (FileError,
// LineError, ReadError). It is internal so that the format packages
// share it without making it part of pointio's API.
package check
