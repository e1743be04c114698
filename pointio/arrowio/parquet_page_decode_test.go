package arrowio

import (
	"os"
	"testing"
)

// The headers the answer writer writes read back as written.
func TestParsePageHeaderWriters(t *testing.T) {
	for _, h := range []pageHeader{
		{uncompressed: 8 << 20, compressed: 123456, values: 1 << 20, encoding: encodingPlain, stats: newPageStats(1, 1<<62, 8), signed: true},
		{uncompressed: 10, compressed: 10, values: 0, encoding: 5},
	} {
		b := appendPageHeader(nil, h)
		b = append(b, 0xde, 0xad) // the page's body
		p, err := parsePageHeader(b)
		if err != nil {
			t.Fatal(err)
		}
		if !p.data || p.typ != pageTypeData || int(p.uncompressed) != h.uncompressed || int(p.compressed) != h.compressed ||
			int(p.values) != h.values || p.encoding != h.encoding || p.defEncoding != encodingRLE || p.size != len(b)-2 {
			t.Fatalf("%+v read back as %+v", h, p)
		}
	}
}

// A header missing a required field, cut short or nested past any
// header's depth is an error.
func TestParsePageHeaderBad(t *testing.T) {
	full := appendPageHeader(nil, pageHeader{uncompressed: 100, compressed: 90, values: 12, encoding: encodingPlain})
	for n := range len(full) {
		if _, err := parsePageHeader(full[:n]); err == nil {
			t.Errorf("a header cut to %d of %d bytes read", n, len(full))
		}
	}
	deep := []byte{0x1c} // field 1, a struct: no field of a PageHeader
	for range 40 {
		deep = append(deep, 0x1c)
	}
	if _, err := parsePageHeader(append([]byte{0x15, 0x00}, deep...)); err == nil {
		t.Error("a header nested 40 deep read")
	}
	if _, err := parsePageHeader([]byte{0x15, 0x00, 0x00}); err == nil {
		t.Error("a header without its sizes read")
	}
}

// Any bytes give a header that lies inside them, or an error, never a
// panic; the corpus starts from the headers the writer writes and those
// of a pyarrow file's pages.
func FuzzParsePageHeader(f *testing.F) {
	f.Add(appendPageHeader(nil, pageHeader{uncompressed: 8 << 20, compressed: 4 << 20, values: 1 << 20, stats: newPageStats(1, 2, 8), signed: true}))
	if b, err := os.ReadFile("testdata/airports_pyarrow_f32.parquet"); err == nil && len(b) > 4 {
		f.Add(b[4:]) // the first page's header
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parsePageHeader(b)
		if err != nil {
			return
		}
		if p.size <= 0 || p.size > len(b) || p.uncompressed < 0 || p.compressed < 0 {
			t.Fatalf("header %+v of %d bytes", p, len(b))
		}
	})
}
