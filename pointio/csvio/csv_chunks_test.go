package csvio

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/geoknn/geoknn/pointio"
	"github.com/paulmach/orb"
)

// Semicolon, tab and bar files are read as comma files are; a quoted
// comma in the header does not fool the guess.
func TestReadCSVDelimiters(t *testing.T) {
	for _, body := range []string{
		"lat;lon;name\n47.4;8.5;\"Zürich, ZH\"\n",
		"lat\tlon\tname\n47.4\t8.5\tZürich\n",
		"\"name, long\"|lat|lon\nZürich|47.4|8.5\n",
	} {
		got, err := Read(bytes.NewReader([]byte(body)), "t.csv")
		if err != nil || len(got) != 1 || got[0] != (orb.Point{8.5, 47.4}) {
			t.Errorf("%q: %v, %v", body, got, err)
		}
	}
}

// Records cut into chunks anywhere (quoted fields with newlines, commas
// and doubled quotes across chunk ends) read as one pass of encoding/csv
// reads them, and a bad value is named on its line of the whole input.
func TestReadCSVChunks(t *testing.T) {
	var b strings.Builder
	b.WriteString("name,lat,lon\n")
	for i := range 300 {
		fmt.Fprintf(&b, "\"place %d, \"\"quoted\"\"\nsecond line\",%d.25,%d.5\n", i, i%170-85, i%350-175)
		if i%7 == 0 {
			b.WriteString("\n,,\n") // blank lines and rows
		}
	}
	input := b.String()
	want, _, err := readCSV(bufio.NewReader(strings.NewReader(input)), "t.csv", 0, pointio.ReadOptions{}, Sink{})
	if err != nil || len(want) != 300 {
		t.Fatalf("%d points, %v", len(want), err)
	}
	for _, block := range []int{1, 7, 64, 1000, 1 << 20} {
		got, err := readChunked(input, block)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("blocks of %d: %d points, %v", block, len(got), err)
		}
	}
	bad := strings.Replace(input, ",15.25,", ",15.25x,", 1)
	wantLine := strings.Count(bad[:strings.Index(bad, "15.25x")], "\n") + 1
	for _, block := range []int{5, 64, 1000} {
		_, err := readChunked(bad, block)
		var ie *pointio.InputError
		if !errors.As(err, &ie) || ie.Line != wantLine || ie.Value != "15.25x" {
			t.Errorf("blocks of %d: %v, want line %d", block, err, wantLine)
		}
	}
}

func readChunked(input string, block int) ([]orb.Point, error) {
	rows, br, err := openCSV(input)
	if err != nil {
		return nil, err
	}
	return rows.readChunks(br, rows.headerEnd, block, 0)
}

// readOnePass is the reference: one encoding/csv pass over the input.
func readOnePass(input string) ([]orb.Point, error) {
	rows, _, err := openCSV(input)
	if err != nil {
		return nil, err
	}
	return rows.readPoints(nil)
}

// openCSV reads the header of input as readCSV does.
func openCSV(input string) (*csvRows, *bufio.Reader, error) {
	br := bufio.NewReader(strings.NewReader(input))
	if err := skipBOM(br); err != nil {
		return nil, nil, err
	}
	cr := newCSVReader(br)
	cr.Comma = sniffDelimiter(br)
	rows, err := readHeader(cr, "t.csv", pointio.ReadOptions{})
	return rows, br, err
}

// Any input reads as one encoding/csv pass reads it, points or error
// (with its line), in blocks of any size.
func FuzzCSVChunks(f *testing.F) {
	f.Add("lat,lon\n1,2\n\"3\n\",4\n", 3)
	f.Add("lat;lon\n1;2\n3;x\n", 1)
	f.Add("lat,lon,\"note\nmore\"\n1,2,a\n95,3,b\n", 2)
	f.Add("lat,lon\n1,2,5'10\"\n3,4\n95,5\n", 4)
	f.Fuzz(func(t *testing.T, input string, block int) {
		block = 1 + abs(block)%64
		want, werr := readOnePass(input)
		got, gerr := readChunked(input, block)
		if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) || !slices.Equal(got, want) {
			t.Fatalf("blocks of %d: %v, %v; whole: %v, %v", block, got, gerr, want, werr)
		}
	})
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
