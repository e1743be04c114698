package pointio

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/paulmach/orb"
)

// readBufferSize is the size of the buffered reader put in front of inputs.
const readBufferSize = 64 << 10

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// Header names accepted for the coordinate columns, compared
// case-insensitively after trimming surrounding white space.
var (
	latNames = [...]string{"lat", "latitude"}
	lonNames = [...]string{"lon", "lng", "long", "longitude"}
)

// ReadOptions adjust how files are read.
type ReadOptions struct {
	// LatColumn and LonColumn name the coordinate columns (matched
	// case-insensitively) in files that have columns of those names, such
	// as "pickup_latitude"; files without them are read by the usual
	// names ("lat", "latitude", "lon", "lng", "long", "longitude").
	LatColumn, LonColumn string
	// Radians says NumPy arrays hold radians, not degrees.
	Radians bool
	// IDColumn names a column whose values ReadFileIDs returns beside the
	// points (CSV, Parquet and Arrow inputs), to carry into the answers.
	IDColumn string

	// sink, when set, takes the CSV reader's points a chunk at a time
	// instead of a result that holds them all (ReadFileRadians).
	sink func([]orb.Point)
	// idSink, with sink, takes the id column's values of the points sink
	// takes, so a stream holds no ids of the rows already handed on.
	idSink func([]string)
}

// ReadCSV reads points from CSV data (RFC 4180, as implemented by
// encoding/csv). name identifies the input in errors, typically the file
// name.
//
// The first record is a header that must name exactly one latitude column
// ("lat" or "latitude") and exactly one longitude column ("lon", "lng",
// "long" or "longitude"); names are matched case-insensitively after
// trimming surrounding white space, and a UTF-8 byte order mark at the start
// of the input is ignored. The columns may appear in any order and other
// columns are ignored, so quoted fields holding commas, quotes, line breaks
// or any UTF-8 are fine. Rows may have any number of fields as long as both
// coordinate fields are present. Empty lines, and rows whose fields are all
// empty or white space (such as the ",,," rows spreadsheets export), are
// skipped; the index of a point in the result counts only the rows kept.
//
// Coordinates are decimal degrees; white space around a number is ignored.
// Every point is validated: a value that is not a decimal number, NaN or
// ±Inf, a latitude outside [-90, 90] or a longitude outside [-180, 180] is
// reported as an *InputError carrying the 1-based line of the field.
//
// The input is streamed: memory use is proportional to the number of
// points, not to the size of the input.
func ReadCSV(r io.Reader, name string) ([]orb.Point, error) {
	pts, _, err := readCSV(bufio.NewReaderSize(r, readBufferSize), name, 0, ReadOptions{})
	return pts, err
}

// readCSV reads CSV from br; sizeHint, the input's size when known (else
// 0), sizes the result.
func readCSV(br *bufio.Reader, name string, sizeHint int64, opts ReadOptions) ([]orb.Point, []string, error) {
	if err := skipBOM(br); err != nil {
		return nil, nil, readError(name, err)
	}
	if err := checkHeaderLength(br, name); err != nil {
		return nil, nil, err
	}
	cr := newCSVReader(br)
	cr.Comma = sniffDelimiter(br)
	rows, err := readHeader(cr, name, opts)
	if err != nil {
		return nil, nil, err
	}
	rows.sink, rows.idSink = opts.sink, opts.idSink
	pts, err := rows.readChunks(br, rows.headerEnd, csvBlockBytes, sizeHint)
	if err != nil {
		return nil, nil, err
	}
	if len(pts) == 0 && rows.sunk == 0 {
		return nil, nil, fileError(name, "no data rows after the header")
	}
	return pts, rows.ids, nil
}

// csvMaxRecordBytes bounds a CSV record (a line, or the lines of a quoted
// field): no file of points has longer ones, and an input made of one
// endless line (a gzip bomb, a binary file named .csv) is refused after
// reading this much of it rather than held whole.
const csvMaxRecordBytes = 1 << 20

// checkHeaderLength refuses a first line longer than csvMaxRecordBytes,
// where br's buffer can see that far (the readers this package opens).
func checkHeaderLength(br *bufio.Reader, name string) error {
	if br.Size() <= csvMaxRecordBytes {
		return nil
	}
	head, _ := br.Peek(csvMaxRecordBytes + 1)
	if len(head) > csvMaxRecordBytes && bytes.IndexByte(head, '\n') < 0 {
		return lineError(name, 1, "a line longer than 1 MiB: not a CSV header naming the coordinate columns")
	}
	return nil
}

// newCSVReader returns a reader that accepts rows of any length, as only
// the coordinate columns matter, and reuses its record between rows.
func newCSVReader(br *bufio.Reader) *csv.Reader {
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	return cr
}

// csvRows reads the data rows of a CSV input whose header has been read.
type csvRows struct {
	cr       *csv.Reader
	name     string // the input, for errors
	lat, lon int    // 0-based columns of the coordinates
	need     int    // fields a row needs to hold both coordinates
	width    int    // the header's fields, which every row must have
	lineBase int    // lines of the input before cr's first (a chunk's place)
	comma    rune
	// headerEnd is the line the header ends on (a quoted name may hold
	// line breaks): the data's lines follow it.
	headerEnd int
	// id is the column of the identifiers asked for (-1: none); ids gets
	// each kept row's.
	id  int
	ids []string
	// sink, if set, takes the points instead of the result; sunk counts
	// them.
	sink   func([]orb.Point)
	idSink func([]string)
	sunk   int
}

// readHeader reads the header record from cr and locates the coordinate
// columns in it.
func readHeader(cr *csv.Reader, name string, opts ReadOptions) (*csvRows, error) {
	header, err := cr.Read()
	if err == io.EOF {
		return nil, fileError(name, "empty file: want a header row naming the latitude and longitude columns")
	}
	if err != nil {
		return nil, csvError(name, err)
	}
	line, _ := cr.FieldPos(0)
	lat, lon, ierr := findColumns(name, line, header, opts)
	if ierr != nil {
		return nil, ierr
	}
	last := len(header) - 1
	end, _ := cr.FieldPos(last)
	end += strings.Count(header[last], "\n")
	rows := &csvRows{cr: cr, name: name, lat: lat, lon: lon, need: max(lat, lon) + 1, width: len(header), comma: cr.Comma, headerEnd: end, id: -1}
	if opts.IDColumn != "" {
		rows.id = slices.IndexFunc(header, func(h string) bool { return strings.EqualFold(strings.TrimSpace(h), opts.IDColumn) })
		if rows.id < 0 {
			return nil, lineError(name, line, fmt.Sprintf("no id column %q; header fields: %s", opts.IDColumn, quoteList(header)))
		}
		rows.need = max(rows.need, rows.id+1)
	}
	return rows, nil
}

// readPoints appends the point of every remaining non-blank row to pts.
func (r *csvRows) readPoints(pts []orb.Point) ([]orb.Point, error) {
	for {
		rec, err := r.cr.Read()
		if err == io.EOF {
			return pts, nil
		}
		if err != nil {
			return nil, r.csvError(err)
		}
		p, ok, err := r.point(rec)
		if err != nil {
			return nil, err
		}
		if ok {
			pts = append(pts, p)
			if r.id >= 0 {
				r.ids = append(r.ids, rec[r.id])
			}
		}
	}
}

// point parses the coordinates of rec, the record just read. It reports
// false, and no error, for a blank row, which is skipped.
func (r *csvRows) point(rec []string) (orb.Point, bool, error) {
	p, ok, bad := r.parseRow(rec)
	if !bad {
		return p, ok, nil
	}
	if len(rec) < r.need {
		return orb.Point{}, false, r.shortRow(rec)
	}
	if len(rec) != r.width && r.width > 0 {
		return orb.Point{}, false, r.widthError(rec)
	}
	if _, reason := parseCoord(rec[r.lat], 90); reason != "" {
		return orb.Point{}, false, r.fieldError(r.lat, fieldLat, rec[r.lat], reason)
	}
	_, reason := parseCoord(rec[r.lon], 180)
	return orb.Point{}, false, r.fieldError(r.lon, fieldLon, rec[r.lon], reason)
}

// parseRow is point without the error: bad reports a row in error.
func (r *csvRows) parseRow(rec []string) (p orb.Point, ok, bad bool) {
	if len(rec) != r.width && r.width > 0 {
		return orb.Point{}, false, !isBlank(rec)
	}
	if len(rec) < r.need {
		return orb.Point{}, false, !isBlank(rec)
	}
	lat, reason := parseCoord(rec[r.lat], 90)
	if reason != "" {
		return orb.Point{}, false, !(reason == reasonEmpty && isBlank(rec))
	}
	lon, reason := parseCoord(rec[r.lon], 180)
	if reason != "" {
		return orb.Point{}, false, true
	}
	return orb.Point{lon, lat}, true, false
}

// shortRow builds the InputError for rec, a record just read that is too
// short to hold both coordinates.
func (r *csvRows) shortRow(rec []string) *InputError {
	line, _ := r.cr.FieldPos(0)
	return lineError(r.name, r.lineBase+line,
		fmt.Sprintf("short row: %d field(s), want at least %d (latitude is column %d, longitude is column %d)",
			len(rec), r.need, r.lat+1, r.lon+1))
}

// lineError returns an InputError about the CSV record on the given line.
func lineError(name string, line int, reason string) *InputError {
	return &InputError{File: name, Line: line, Feature: -1, Point: -1, Reason: reason}
}

// isBlank reports whether every field of rec is empty or white space, as
// in the ",,," rows spreadsheets export below the data.
func isBlank(rec []string) bool {
	for _, f := range rec {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}

// fieldError builds the InputError for a bad value in column col of the
// record just read.
func (r *csvRows) fieldError(col int, field, value, reason string) *InputError {
	line, _ := r.cr.FieldPos(col)
	return &InputError{File: r.name, Line: r.lineBase + line, Feature: -1, Point: -1, Field: field, Value: value, Reason: reason}
}

// csvError is csvError for a chunk: its line numbers count from the input's
// start.
func (r *csvRows) csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		shifted := *pe
		shifted.Line += r.lineBase
		shifted.StartLine += r.lineBase
		err = &shifted
	}
	return csvError(r.name, err)
}

// parseCoord parses a coordinate in decimal degrees and checks that it lies
// in [-limit, limit]. It returns a non-empty reason if the value is invalid.
func parseCoord(s string, limit float64) (float64, string) {
	if v, ok := parsePlainDecimal(s); ok {
		return v, rangeReason(v, limit)
	}
	if v, err := strconv.ParseFloat(s, 64); err == nil && isDecimal(s) {
		return v, rangeReason(v, limit)
	}
	// Slow path: surrounding white space, or an invalid value.
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, reasonEmpty
	}
	v, err := strconv.ParseFloat(t, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		// A finite decimal beyond the float64 range: far out of range.
		return 0, outOfRange(limit)
	case err != nil:
		return 0, reasonNaN
	case isDecimal(t):
		return v, rangeReason(v, limit)
	case math.IsNaN(v) || math.IsInf(v, 0):
		return 0, reasonNotFinite
	default:
		// ParseFloat also accepts hexadecimal floats ("0x1p-2") and
		// digit separators ("1_000"); neither belongs in a coordinate.
		return 0, reasonHex
	}
}

// exactPow10 holds the powers of ten that are exact in a float64.
var exactPow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parsePlainDecimal is a fast path for the usual coordinate syntax: an
// optional sign, digits and an optional decimal point, at most 18 digits in
// all, and no exponent. It reports false for anything else, leaving it to
// strconv.ParseFloat.
//
// The result equals strconv.ParseFloat's: with at most 18 digits the
// significand is an integer below 2^63; when it is also at most 2^53 it
// and the power of ten (at most 1e22) are exact float64 values, and IEEE
// division rounds their quotient correctly (Clinger's fast path).
func parsePlainDecimal(s string) (float64, bool) {
	i := 0
	neg := false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		i = 1
	}
	var mant uint64
	digits, frac := 0, -1 // frac < 0: no decimal point yet
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			mant = mant*10 + uint64(c-'0')
			digits++
			if frac >= 0 {
				frac++
			}
		case c == '.' && frac < 0:
			frac = 0
		default:
			return 0, false
		}
	}
	if digits == 0 || digits > 18 || mant > 1<<53 {
		return 0, false
	}
	v := float64(mant)
	if frac > 0 {
		v /= exactPow10[frac] // frac <= digits <= 18
	}
	if neg {
		v = -v
	}
	return v, true
}

// isDecimal reports whether s holds only the bytes of a decimal number:
// digits, '.', signs and exponent markers.
func isDecimal(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && c != '.' && c != '-' && c != '+' && c != 'e' && c != 'E' {
			return false
		}
	}
	return true
}

// rangeReason reports why v is not a valid coordinate with the given
// limit (90 for latitude, 180 for longitude), or "" if it is valid.
func rangeReason(v, limit float64) string {
	if v >= -limit && v <= limit {
		return ""
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return reasonNotFinite
	}
	return outOfRange(limit)
}

func outOfRange(limit float64) string {
	if limit == 90 {
		return reasonLatRange
	}
	return reasonLonRange
}

// LatLonColumns locates the latitude and longitude columns among names
// (a header, or a columnar file's column names) as the CSV reader does:
// "lat"/"latitude" and "lon"/"lng"/"long"/"longitude", any case; the error
// lists the names accepted and those found.
func LatLonColumns(file string, names []string, opts ReadOptions) (lat, lon int, err error) {
	lat, lon, ierr := findColumns(file, 0, names, opts)
	if ierr != nil {
		ierr.Reason = strings.Replace(ierr.Reason, "header has", "the file has", 1)
		ierr.Reason = strings.Replace(ierr.Reason, "header fields", "columns", 1)
		return -1, -1, ierr
	}
	return lat, lon, nil
}

// findColumns locates the latitude and longitude columns in header, the
// record read from the given line.
func findColumns(name string, line int, header []string, opts ReadOptions) (latCol, lonCol int, _ *InputError) {
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

// sniffDelimiter picks the field delimiter of a CSV input from its first
// line: the most frequent of comma, semicolon, tab and bar outside quotes
// (comma when none occurs), without consuming input.
func sniffDelimiter(br *bufio.Reader) rune {
	head, _ := br.Peek(min(br.Size(), 1<<16))
	if end := bytes.IndexByte(head, '\n'); end >= 0 {
		head = head[:end]
	}
	counts := map[byte]int{}
	quoted := false
	for _, c := range head {
		switch {
		case c == '"':
			quoted = !quoted
		case !quoted && (c == ',' || c == ';' || c == '\t' || c == '|'):
			counts[c]++
		}
	}
	best := byte(',')
	for _, c := range []byte{';', '\t', '|'} {
		if counts[c] > counts[best] {
			best = c
		}
	}
	return rune(best)
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

// skipBOM discards a UTF-8 byte order mark at the start of br.
func skipBOM(br *bufio.Reader) error {
	b, err := br.Peek(len(utf8BOM))
	if string(b) == string(utf8BOM) {
		_, err = br.Discard(len(utf8BOM))
		return err
	}
	if err != nil && err != io.EOF {
		return err
	}
	return nil
}

// csvError converts an error from csv.Reader.Read into an InputError for
// syntax errors, or a wrapped read error otherwise.
func csvError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) && pe.Err != nil {
		reason := fmt.Sprintf("CSV syntax error at column %d", pe.Column)
		if pe.StartLine != pe.Line {
			reason += fmt.Sprintf(" (in the record starting on line %d)", pe.StartLine)
		}
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			// Cannot happen with FieldsPerRecord = -1, but be explicit.
			reason = "wrong number of fields"
		}
		return &InputError{File: name, Line: pe.Line, Feature: -1, Point: -1, Reason: reason, Err: pe.Err}
	}
	return readError(name, err)
}

// readError wraps an I/O error from reading the input.
func readError(name string, err error) error {
	var ie *InputError
	if errors.As(err, &ie) {
		return ie
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("read points: %w", err)
	}
	return fmt.Errorf("read points from %s: %w", name, err)
}
