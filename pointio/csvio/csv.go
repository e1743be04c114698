package csvio

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/internal/check"
	"github.com/paulmach/orb"
)

// readBufferSize is the size of the buffered reader put in front of inputs.
const readBufferSize = 64 << 10

// Read reads points from CSV data (RFC 4180, as implemented by
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
func Read(r io.Reader, name string) ([]orb.Point, error) {
	pts, _, err := readCSV(bufio.NewReaderSize(r, readBufferSize), name, 0, pointio.ReadOptions{}, Sink{})
	return pts, err
}

// Sink takes a CSV input's points a block at a time, as they are parsed,
// instead of a result that holds them all: Points takes the points and
// IDs, with Points, the id column's values of the points Points took, so
// that a stream holds no ids of the rows already handed on.
type Sink struct {
	Points func([]orb.Point)
	IDs    func([]string)
}

// ReaderBufferSize is the buffer ReadBuffered's reader needs to refuse a
// first line longer than a CSV record may be before reading it whole.
const ReaderBufferSize = csvMaxRecordBytes + readBufferSize

// ReadBuffered is Read from br (a buffer of ReaderBufferSize), with
// opts, and the points handed to sink when sink.Points is set (the result
// then holds none): how package formats reads a file or a stream.
// sizeHint, the input's size when known (else 0), sizes the result.
func ReadBuffered(br *bufio.Reader, name string, sizeHint int64, opts pointio.ReadOptions, sink Sink) ([]orb.Point, []string, error) {
	return readCSV(br, name, sizeHint, opts, sink)
}

// readCSV reads CSV from br; sizeHint, the input's size when known (else
// 0), sizes the result.
func readCSV(br *bufio.Reader, name string, sizeHint int64, opts pointio.ReadOptions, sink Sink) ([]orb.Point, []string, error) {
	if err := skipBOM(br); err != nil {
		return nil, nil, check.ReadError(name, err)
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
	rows.sink, rows.idSink = sink.Points, sink.IDs
	pts, err := rows.readChunks(br, rows.headerEnd, csvBlockBytes, sizeHint)
	if err != nil {
		return nil, nil, err
	}
	if len(pts) == 0 && rows.sunk == 0 {
		return nil, nil, check.FileError(name, "no data rows after the header")
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
		return check.LineError(name, 1, "a line longer than 1 MiB: not a CSV header naming the coordinate columns")
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
func readHeader(cr *csv.Reader, name string, opts pointio.ReadOptions) (*csvRows, error) {
	header, err := cr.Read()
	if err == io.EOF {
		return nil, check.FileError(name, "empty file: want a header row naming the latitude and longitude columns")
	}
	if err != nil {
		return nil, csvError(name, err)
	}
	line, _ := cr.FieldPos(0)
	lat, lon, ierr := pointio.HeaderColumns(name, line, header, opts)
	if ierr != nil {
		return nil, ierr
	}
	last := len(header) - 1
	end, _ := cr.FieldPos(last)
	end += strings.Count(header[last], "\n")
	rows := &csvRows{cr: cr, name: name, lat: lat, lon: lon, need: max(lat, lon) + 1, width: len(header), comma: cr.Comma, headerEnd: end, id: -1}
	if opts.IDColumn != "" {
		if rows.id, ierr = pointio.IDColumn(name, line, header, opts.IDColumn); ierr != nil {
			return nil, ierr
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
	if _, reason := check.Coord(rec[r.lat], 90); reason != "" {
		return orb.Point{}, false, r.fieldError(r.lat, check.FieldLat, rec[r.lat], reason)
	}
	_, reason := check.Coord(rec[r.lon], 180)
	return orb.Point{}, false, r.fieldError(r.lon, check.FieldLon, rec[r.lon], reason)
}

// parseRow is point without the error: bad reports a row in error.
func (r *csvRows) parseRow(rec []string) (p orb.Point, ok, bad bool) {
	if len(rec) != r.width && r.width > 0 {
		return orb.Point{}, false, !isBlank(rec)
	}
	if len(rec) < r.need {
		return orb.Point{}, false, !isBlank(rec)
	}
	lat, reason := check.Coord(rec[r.lat], 90)
	if reason != "" {
		return orb.Point{}, false, !(reason == check.ReasonEmpty && isBlank(rec))
	}
	lon, reason := check.Coord(rec[r.lon], 180)
	if reason != "" {
		return orb.Point{}, false, true
	}
	return orb.Point{lon, lat}, true, false
}

// shortRow builds the InputError for rec, a record just read that is too
// short to hold both coordinates.
func (r *csvRows) shortRow(rec []string) *pointio.InputError {
	line, _ := r.cr.FieldPos(0)
	return check.LineError(r.name, r.lineBase+line,
		fmt.Sprintf("short row: %d field(s), want at least %d (latitude is column %d, longitude is column %d)",
			len(rec), r.need, r.lat+1, r.lon+1))
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
func (r *csvRows) fieldError(col int, field, value, reason string) *pointio.InputError {
	line, _ := r.cr.FieldPos(col)
	return &pointio.InputError{File: r.name, Line: r.lineBase + line, Feature: -1, Point: -1, Field: field, Value: value, Reason: reason}
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

// skipBOM discards a UTF-8 byte order mark at the start of br.
func skipBOM(br *bufio.Reader) error {
	b, err := br.Peek(len(check.BOM))
	if string(b) == string(check.BOM) {
		_, err = br.Discard(len(check.BOM))
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
		return &pointio.InputError{File: name, Line: pe.Line, Feature: -1, Point: -1, Reason: reason, Err: pe.Err}
	}
	return check.ReadError(name, err)
}
