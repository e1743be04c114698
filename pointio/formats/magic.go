package formats

import (
	"bufio"
	"strings"
)

// The first bytes of the formats read by content.
const (
	parquetMagic = "PAR1"      // starts (and ends) a Parquet file
	npyMagic     = "\x93NUMPY" // a .npy array
	gzipMagic    = "\x1f\x8b"  // gzip-compressed text
)

// spooledMagics are the first bytes of the formats read from their end
// or at random, which a stream (standard input, a pipe) cannot be: such a
// stream is copied to a temporary file of the extension that reads it.
// Every other stream is read as it comes (text, gzip, GeoJSON, .npy).
var spooledMagics = []struct{ magic, ext string }{
	{parquetMagic, ".parquet"},
	{"ARROW1", ".arrow"},            // an Arrow IPC file (Feather v2)
	{"\xff\xff\xff\xff", ".arrows"}, // an Arrow IPC stream
	{"PK\x03\x04", ".npz"},          // a zip archive: NumPy's .npz
}

// spooledExt is the extension of the format br's first bytes say when it
// is one read from its end, "" for the others.
func spooledExt(br *bufio.Reader) string {
	head, _ := br.Peek(8)
	for _, m := range spooledMagics {
		if strings.HasPrefix(string(head), m.magic) {
			return m.ext
		}
	}
	return ""
}
