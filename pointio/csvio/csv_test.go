package csvio

import (
	"encoding/csv"
	"errors"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/geoknn/geoknn/pointio"
	"github.com/paulmach/orb"
)

func TestReadCSV(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []orb.Point
	}{
		{"minimal", "lat,lon\n1,2\n", []orb.Point{{2, 1}}},
		{"lon first", "lon,lat\n1,2\n", []orb.Point{{1, 2}}},
		{"no final newline", "lat,lon\n1,2\n3,4", []orb.Point{{2, 1}, {4, 3}}},
		{"CRLF", "lat,lon\r\n1,2\r\n3,4\r\n", []orb.Point{{2, 1}, {4, 3}}},
		{"BOM", "\uFEFFlat,lon\n1,2\n", []orb.Point{{2, 1}}},
		{"BOM and CRLF", "\uFEFFLatitude,Longitude\r\n-1.5,2.25\r\n", []orb.Point{{2.25, -1.5}}},
		{"upper case", "LAT,LON\n1,2\n", []orb.Point{{2, 1}}},
		{"mixed case long names", "Longitude,LATITUDE\n1,2\n", []orb.Point{{1, 2}}},
		{"lng", "lat,lng\n1,2\n", []orb.Point{{2, 1}}},
		{"long", "long,lat\n1,2\n", []orb.Point{{1, 2}}},
		{"header spaces trimmed", " lat ,\tlon \n1,2\n", []orb.Point{{2, 1}}},
		{"quoted header", "\"lat\",\" lon\"\n1,2\n", []orb.Point{{2, 1}}},
		{"other columns ignored", "id,name,lat,pop,lon,x\n7,a,1,5,2,y\n", []orb.Point{{2, 1}}},
		{"quoted numbers", "lat,lon\n\"1.5\",\"-2.5\"\n", []orb.Point{{-2.5, 1.5}}},
		{"spaces around numbers", "lat,lon\n 1.5 ,\t-2.5\n", []orb.Point{{-2.5, 1.5}}},
		{"signs and exponents", "lat,lon\n+1e1,-1.5E2\n", []orb.Point{{-150, 10}}},
		{"negative zero", "lat,lon\n-0,-0.0\n", []orb.Point{{0, 0}}},
		{"bounds", "lat,lon\n90,180\n-90,-180\n", []orb.Point{{180, 90}, {-180, -90}}},
		{"blank rows skipped", "lat,lon,name\n1,2,a\n,,\n , \t,\n,\n3,4,b\n,,\n", []orb.Point{{2, 1}, {4, 3}}},
		{"blank lines skipped", "\n\nlat,lon\n\n1,2\n\n\n3,4\n\n", []orb.Point{{2, 1}, {4, 3}}},
		{
			"quoted names with commas, quotes, UTF-8 and newlines",
			"name,lat,lon\n" +
				"\"Zürich, HB\",47.3779,8.5403\n" +
				"\"Say \"\"hi\"\", 東京\",35.6762,139.6503\n" +
				"\"two\nlines, \"\"quoted\"\"\",-54.8019,-68.303\n",
			[]orb.Point{{8.5403, 47.3779}, {139.6503, 35.6762}, {-68.303, -54.8019}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Read(strings.NewReader(tt.in), "t.csv")
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			// A one-byte-at-a-time reader must give the same result.
			got, err = Read(iotest.OneByteReader(strings.NewReader(tt.in)), "t.csv")
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("one byte at a time: got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestReadCSVErrors(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		line      int      // want pointio.InputError.Line
		field     string   // want pointio.InputError.Field
		contains  []string // substrings of Error(), besides the file name and line
		wantCause error    // if set, errors.Is(err, wantCause) must hold
	}{
		{name: "latitude too large", in: "lat,lon\n1,2\n95.2,10\n", line: 3, field: "lat",
			contains: []string{`t.csv:3: latitude "95.2" out of range [-90, 90]`}},
		{name: "latitude too small", in: "lon,lat\n1,2\n3,-90.0001\n", line: 3, field: "lat",
			contains: []string{`latitude "-90.0001" out of range [-90, 90]`}},
		{name: "longitude too large", in: "lat,lon\n1,181\n", line: 2, field: "lon",
			contains: []string{`t.csv:2: longitude "181" out of range [-180, 180]`}},
		{name: "longitude too small", in: "lat,lon\n1,-180.5\n", line: 2, field: "lon",
			contains: []string{`longitude "-180.5" out of range [-180, 180]`}},
		{name: "NaN", in: "lat,lon\nNaN,1\n", line: 2, field: "lat",
			contains: []string{`latitude "NaN" is not a finite number`}},
		{name: "nan lower case", in: "lat,lon\n1,nan\n", line: 2, field: "lon",
			contains: []string{`longitude "nan" is not a finite number`}},
		{name: "+Inf", in: "lat,lon\n+Inf,1\n", line: 2, field: "lat",
			contains: []string{`"+Inf" is not a finite number`}},
		{name: "-infinity", in: "lat,lon\n1,-infinity\n", line: 2, field: "lon",
			contains: []string{`"-infinity" is not a finite number`}},
		{name: "overflow", in: "lat,lon\n1e400,1\n", line: 2, field: "lat",
			contains: []string{`latitude "1e400" out of range [-90, 90]`}},
		{name: "not a number", in: "lat,lon\n1,2\nabc,3\n", line: 3, field: "lat",
			contains: []string{`latitude "abc" is not a number`}},
		{name: "decimal comma", in: "lat,lon\n\"45,5\",3\n", line: 2, field: "lat",
			contains: []string{`latitude "45,5" is not a number`}},
		{name: "degrees minutes seconds", in: "lat,lon\n1,\"8°32'25\"\"E\"\n", line: 2, field: "lon",
			contains: []string{`longitude "8°32'25\"E" is not a number`}},
		{name: "digit separators", in: "lat,lon\n1_0,3\n", line: 2, field: "lat",
			contains: []string{`latitude "1_0" is not a decimal number`}},
		{name: "hexadecimal", in: "lat,lon\n0x1p4,3\n", line: 2, field: "lat",
			contains: []string{`latitude "0x1p4" is not a decimal number`}},
		{name: "signed hexadecimal", in: "lat,lon\n1,-0X1P4\n", line: 2, field: "lon",
			contains: []string{`longitude "-0X1P4" is not a decimal number`}},
		{name: "empty latitude", in: "lat,lon\n,3\n", line: 2, field: "lat",
			contains: []string{`latitude "" is empty`}},
		{name: "empty latitude with a name", in: "lat,lon,name\n,,x\n", line: 2, field: "lat",
			contains: []string{`t.csv:2: latitude "" is empty`}},
		{name: "long value shortened", in: "name,lat,lon\nx,\"" + strings.Repeat("9", 200) + "\",0\n", line: 2, field: "lat",
			contains: []string{`t.csv:2: latitude "` + strings.Repeat("9", 80) + `…" out of range [-90, 90]`}},
		{name: "blank longitude", in: "lat,lon\n1,  \n", line: 2, field: "lon",
			contains: []string{`longitude "  " is empty`}},
		{name: "line after blank lines", in: "lat,lon\n\n1,2\n\n\n91,0\n", line: 6, field: "lat",
			contains: []string{`t.csv:6: latitude "91"`}},
		{name: "line after multi-line quoted field", in: "name,lat,lon\n\"a\nb\nc\",1,2\nx,1,200\n", line: 5, field: "lon",
			contains: []string{`t.csv:5: longitude "200"`}},
		{name: "line of field inside multi-line record", in: "name,lat,lon\n\"a\nb\",91,2\n", line: 3, field: "lat",
			contains: []string{`t.csv:3: latitude "91"`}},
		{name: "line after BOM and CRLF", in: "\uFEFFlat,lon\r\n1,2\r\n1,x\r\n", line: 3, field: "lon",
			contains: []string{`t.csv:3: longitude "x" is not a number`}},
		// Rows whose field count is not the header's are refused with
		// the line (#41): "10,20,30" under "lat,lon" is not a point.
		{name: "long row", in: "lat,lon\n1,2\n10,20,30\n", line: 3,
			contains: []string{"t.csv:3: long row: 3 field(s), the header has 2"}},
		{name: "fewer fields than header", in: "lat,lon,name,pop\n1,2\n", line: 2,
			contains: []string{"t.csv:2: short row: 2 field(s), the header has 4"}},
		{name: "short row", in: "lat,lon,name\n1,2,a\n5\n", line: 3,
			contains: []string{"t.csv:3: short row: 1 field(s), want at least 2"}},
		{name: "short row with later lat column", in: "name,x,lon,lat\n\"a, b\",1,2\n", line: 2,
			contains: []string{"t.csv:2: short row: 3 field(s), want at least 4 (latitude is column 4, longitude is column 3)"}},
		{name: "no coordinate columns", in: "y,x,name\n1,2,a\n", line: 1,
			contains: []string{"t.csv:1: header has no latitude or longitude column", `header fields: "y", "x", "name"`}},
		{name: "no latitude column", in: "lat_deg,lon\n1,2\n", line: 1,
			contains: []string{"t.csv:1: header has no latitude column", `"lat", "latitude"`, `header fields: "lat_deg", "lon"`}},
		{name: "no longitude column", in: "\n\nname,lat,longitude_e\n1,2,3\n", line: 3,
			contains: []string{"t.csv:3: header has no longitude column", `"lon", "lng", "long", "longitude"`, `"longitude_e"`}},
		{name: "numbers in header row", in: "1.5,2.5\n3,4\n", line: 1,
			contains: []string{"t.csv:1: header has no latitude or longitude column", `header fields: "1.5", "2.5"`}},
		{name: "ambiguous latitude", in: "lat,lon,Latitude\n1,2,3\n", line: 1,
			contains: []string{`t.csv:1: ambiguous header: columns 1 ("lat") and 3 ("Latitude") both name the latitude`}},
		{name: "ambiguous longitude", in: "lng,lat,lon\n1,2,3\n", line: 1,
			contains: []string{`columns 1 ("lng") and 3 ("lon") both name the longitude`}},
		{name: "empty file", in: "", contains: []string{"t.csv: empty file"}},
		{name: "only BOM", in: "\uFEFF", contains: []string{"t.csv: empty file"}},
		{name: "only blank lines", in: "\n\r\n\n", contains: []string{"t.csv: empty file"}},
		{name: "header only", in: "lat,lon\n", contains: []string{"t.csv: no data rows"}},
		{name: "header and blank lines", in: "lat,lon\n\n\n", contains: []string{"t.csv: no data rows"}},
		{name: "header and blank rows", in: "lat,lon\n,\n , \n", contains: []string{"t.csv: no data rows"}},
		{name: "bare quote", in: "lat,lon\n1,2\n3,4\"x\n", line: 3, wantCause: csv.ErrBareQuote,
			contains: []string{"t.csv:3: CSV syntax error at column 4", `bare " in non-quoted-field`}},
		{name: "extraneous quote", in: "name,lat,lon\n\"a\"b,1,2\n", line: 2, wantCause: csv.ErrQuote,
			contains: []string{"t.csv:2: CSV syntax error", `extraneous or missing " in quoted-field`}},
		{name: "unterminated quote", in: "name,lat,lon\nx,1,2\n\"open,1,2\nmore\n", line: 4, wantCause: csv.ErrQuote,
			contains: []string{"t.csv:4: CSV syntax error", "in the record starting on line 3"}},
		{name: "syntax error in header", in: "la\"t,lon\n1,2\n", line: 1, wantCause: csv.ErrBareQuote,
			contains: []string{"t.csv:1: CSV syntax error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pts, err := Read(strings.NewReader(tt.in), "t.csv")
			if err == nil {
				t.Fatalf("Read returned %v and no error", pts)
			}
			if pts != nil {
				t.Errorf("Read returned points %v with the error", pts)
			}
			var ie *pointio.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %q (%T) is not an *pointio.InputError", err, err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "t.csv") {
				t.Errorf("error %q does not start with the file name", msg)
			}
			if ie.Line != tt.line {
				t.Errorf("Line = %d, want %d (error %q)", ie.Line, tt.line, msg)
			}
			if ie.Field != tt.field {
				t.Errorf("Field = %q, want %q (error %q)", ie.Field, tt.field, msg)
			}
			if ie.Feature != -1 || ie.Point != -1 {
				t.Errorf("Feature, Point = %d, %d, want -1, -1", ie.Feature, ie.Point)
			}
			for _, s := range tt.contains {
				if !strings.Contains(msg, s) {
					t.Errorf("error %q does not contain %q", msg, s)
				}
			}
			if tt.wantCause != nil && !errors.Is(err, tt.wantCause) {
				t.Errorf("errors.Is(%q, %v) = false", msg, tt.wantCause)
			}
		})
	}
}

func TestReadCSVReadError(t *testing.T) {
	cause := errors.New("disk on fire")
	r := iotest.ErrReader(cause)
	_, err := Read(r, "t.csv")
	if !errors.Is(err, cause) {
		t.Fatalf("Read error = %v, want it to wrap %v", err, cause)
	}
	if !strings.Contains(err.Error(), "t.csv") {
		t.Errorf("error %q does not name the input", err)
	}

	// An error after some data.
	r = &failAfter{r: strings.NewReader("lat,lon\n1,2\n3,4\n"), n: 12, err: cause}
	_, err = Read(r, "t.csv")
	if !errors.Is(err, cause) {
		t.Fatalf("Read error = %v, want it to wrap %v", err, cause)
	}
}

// failAfter reads n bytes from r, then fails with err.
type failAfter struct {
	r   *strings.Reader
	n   int
	err error
}

func (f *failAfter) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, f.err
	}
	p = p[:min(len(p), f.n)]
	n, err := f.r.Read(p)
	f.n -= n
	return n, err
}
