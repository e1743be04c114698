package formats

import (
	"bufio"
	"strings"

	"github.com/geoknn/geoknn/pointio/arrowio"
	"github.com/geoknn/geoknn/pointio/numpyio"
)

// gzipMagic starts gzip-compressed text, the one format read by content
// that no format package reads.
const gzipMagic = "\x1f\x8b"

// spooledMagics are the first bytes of the formats read from their end
// or at random, which a stream (standard input, a pipe) cannot be: such a
// stream is copied to a temporary file of the extension that reads it.
// Every other stream is read as it comes (text, gzip, GeoJSON, .npy).
var spooledMagics = []struct{ magic, ext string }{
	{arrowio.ParquetMagic, ".parquet"},
	{arrowio.IPCFileMagic, ".arrow"},
	{arrowio.IPCStreamMagic, ".arrows"},
	{numpyio.NPZMagic, ".npz"},
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
