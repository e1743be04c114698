package pointio

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Header names accepted for the coordinate columns, compared
// case-insensitively after trimming surrounding white space.
var (
	latNames = [...]string{"lat", "latitude"}
	lonNames = [...]string{"lon", "lng", "long", "longitude"}
)

// LatLonColumns locates the latitude and longitude columns among names
// (a header, or a columnar file's column names) as the CSV reader does:
// "lat"/"latitude" and "lon"/"lng"/"long"/"longitude", any case; the error
// lists the names accepted and those found.
func LatLonColumns(file string, names []string, opts ReadOptions) (lat, lon int, err error) {
	lat, lon, ierr := HeaderColumns(file, 0, names, opts)
	if ierr != nil {
		ierr.Reason = strings.Replace(ierr.Reason, "header has", "the file has", 1)
		ierr.Reason = strings.Replace(ierr.Reason, "header fields", "columns", 1)
		return -1, -1, ierr
	}
	return lat, lon, nil
}

// HeaderColumns locates the latitude and longitude columns in header, a
// CSV record read from the given line, as LatLonColumns does; the error
// names that line.
func HeaderColumns(name string, line int, header []string, opts ReadOptions) (latCol, lonCol int, _ *InputError) {
	latCol, lonCol = -1, -1
	lats, lons := chosenNames(header, opts.LatColumn, latNames[:]), chosenNames(header, opts.LonColumn, lonNames[:])
	for i, h := range header {
		h = strings.TrimSpace(h)
		var col *int
		var what string
		switch {
		case matchesAny(h, lats):
			col, what = &latCol, "latitude"
		case matchesAny(h, lons):
			col, what = &lonCol, "longitude"
		default:
			continue
		}
		if *col >= 0 {
			return -1, -1, lineError(name, line,
				fmt.Sprintf("ambiguous header: columns %d (%q) and %d (%q) both name the %s",
					*col+1, strings.TrimSpace(header[*col]), i+1, h, what))
		}
		*col = i
	}
	if latCol < 0 || lonCol < 0 {
		return -1, -1, missingColumns(name, line, header, latCol < 0, lonCol < 0)
	}
	return latCol, lonCol, nil
}

// missingColumns builds the InputError for a header lacking the latitude
// column, the longitude column or both, listing the names accepted and the
// fields found so that the fix is obvious.
func missingColumns(name string, line int, header []string, noLat, noLon bool) *InputError {
	var missing string
	switch {
	case noLat && noLon:
		missing = "no latitude or longitude column"
	case noLat:
		missing = "no latitude column"
	default:
		missing = "no longitude column"
	}
	return lineError(name, line,
		fmt.Sprintf("header has %s (latitude: %s; longitude: %s; case-insensitive); header fields: %s",
			missing, quoteList(latNames[:]), quoteList(lonNames[:]), quoteList(header)))
}

// chosenNames are the names a coordinate column goes by in header: the
// one asked for when header has it, else the usual ones.
func chosenNames(header []string, asked string, usual []string) []string {
	if asked != "" && matchesAny(asked, trimmed(header)) {
		return []string{asked}
	}
	return usual
}

func trimmed(fields []string) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = strings.TrimSpace(f)
	}
	return out
}

func matchesAny(s string, names []string) bool {
	for _, n := range names {
		if strings.EqualFold(s, n) {
			return true
		}
	}
	return false
}

// quoteList formats names as a comma-separated list of quoted strings,
// shortened if very long.
func quoteList(names []string) string {
	const maxShown = 20
	var b strings.Builder
	for i, n := range names {
		if i == maxShown {
			fmt.Fprintf(&b, ", … (%d more)", len(names)-maxShown)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		if len(n) > 64 {
			n = n[:64] + "…"
		}
		b.WriteString(strconv.Quote(n))
	}
	return b.String()
}

// IDColumn locates the column named id (any case) in header, the record
// read from the given line; the error lists the header's fields.
func IDColumn(name string, line int, header []string, id string) (int, *InputError) {
	col := slices.IndexFunc(header, func(h string) bool { return strings.EqualFold(strings.TrimSpace(h), id) })
	if col < 0 {
		return -1, lineError(name, line, fmt.Sprintf("no id column %q; header fields: %s", id, quoteList(header)))
	}
	return col, nil
}

// lineError returns an InputError about the record on the given line.
func lineError(name string, line int, reason string) *InputError {
	return &InputError{File: name, Line: line, Feature: -1, Point: -1, Reason: reason}
}
