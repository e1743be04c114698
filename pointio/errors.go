package pointio

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// InputError reports a problem with the content of an input file: a value
// that is not a valid coordinate, a malformed row, a missing header column,
// a CSV or JSON syntax error, or a file without points.
//
// Errors about the file system (a file that cannot be opened or read) are
// not InputErrors; they wrap the underlying *fs.PathError instead.
type InputError struct {
	// File is the name of the input as given to the reader (csvio.Read,
	// formats.ReadFile, ...).
	File string

	// Line is the 1-based line of the offending field in a CSV file, taken
	// from the position of the field itself, so quoted fields spanning
	// several lines are accounted for. For GeoJSON it is 0, except for
	// errors in the JSON syntax or in the structure of the top-level object,
	// where it is the line encoding/json reports.
	Line int

	// Column is the 1-based byte column on Line where the fault starts in
	// GeoJSON input (the offending feature, or the JSON syntax error), and
	// 0 when not known (CSV lines name their field instead).
	Column int

	// Row is the 1-based row of the offending point in a columnar file
	// (Parquet), and 0 otherwise.
	Row int64

	// Feature is the 0-based index of the offending feature in a GeoJSON
	// FeatureCollection's "features" array, or -1 when not applicable
	// (CSV input, a bare Feature or a bare geometry).
	Feature int

	// Point is the 0-based index of the offending position within a GeoJSON
	// MultiPoint, or -1 when not applicable.
	Point int

	// Field is "lat" or "lon" when a coordinate value is at fault, and ""
	// otherwise.
	Field string

	// Value is the offending value as it appears in the input: the field
	// text for CSV, the number for GeoJSON.
	Value string

	// Reason describes what is wrong, for example
	// "out of range [-90, 90]".
	Reason string

	// Err is the underlying error, such as a *csv.ParseError or a
	// *json.SyntaxError, or nil.
	Err error
}

// Error formats the error as "file:line: what is wrong" for CSV input and
// "file: feature N: what is wrong" for GeoJSON input, for example
//
//	cities.csv:1234: latitude "95.2" out of range [-90, 90]
//	points.geojson: feature 17: longitude 181 out of range [-180, 180]
func (e *InputError) Error() string {
	var b strings.Builder
	b.Grow(len(e.File) + len(e.Value) + len(e.Reason) + 48)
	e.writeLocation(&b)
	b.WriteString(": ")
	if e.Field != "" {
		e.writeValue(&b)
	}
	b.WriteString(e.Reason)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// writeLocation writes the file name followed by whichever of the line,
// feature and point apply.
func (e *InputError) writeLocation(b *strings.Builder) {
	if e.File == "-" {
		b.WriteString("standard input") // as the binary formats read from it say
	} else if e.File != "" {
		b.WriteString(e.File)
	} else {
		b.WriteString("<input>")
	}
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
	}
	if e.Line > 0 && e.Column > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Column))
	}
	if e.Row > 0 {
		b.WriteString(": row ")
		b.WriteString(strconv.FormatInt(e.Row, 10))
	}
	if e.Feature >= 0 {
		b.WriteString(": feature ")
		b.WriteString(strconv.Itoa(e.Feature))
	}
	if e.Point >= 0 {
		b.WriteString(": point ")
		b.WriteString(strconv.Itoa(e.Point))
	}
}

// writeValue writes the field's label and the offending value, followed by
// a space. A binary format's missing value (Value empty) is not shown.
func (e *InputError) writeValue(b *strings.Builder) {
	b.WriteString(fieldLabel(e.Field))
	b.WriteByte(' ')
	v := shortenValue(e.Value)
	if v == "" && e.Line == 0 {
		return
	}
	if e.Line > 0 && e.Column == 0 {
		// CSV: the value is arbitrary text; quote it so that empty
		// values, spaces and control characters are visible.
		b.WriteString(strconv.Quote(v))
	} else {
		b.WriteString(v)
	}
	b.WriteByte(' ')
}

// shortenValue cuts v to at most maxValueShown bytes, at a rune boundary,
// marking the cut with "…", so that messages stay readable when a field
// swallowed half the file.
func shortenValue(v string) string {
	if len(v) <= maxValueShown {
		return v
	}
	cut := maxValueShown
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return v[:cut] + "…"
}

// Unwrap returns the underlying error, if any.
func (e *InputError) Unwrap() error { return e.Err }

// maxValueShown is the number of bytes of InputError.Value that Error shows.
const maxValueShown = 80

func fieldLabel(field string) string {
	switch field {
	case "lat":
		return "latitude"
	case "lon":
		return "longitude"
	}
	return field
}
