package csvio

import (
	"bufio"
	"bytes"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	"github.com/geoknn/geoknn/internal/parallel"
	"github.com/geoknn/geoknn/pointio/internal/check"
	"github.com/paulmach/orb"
)

// csvBlockBytes is how much of a CSV input is read at a time and parsed
// on every core, in chunks that start and end on record boundaries.
const csvBlockBytes = 32 << 20

// readChunks reads the data rows after the header (on line headerLine)
// from br, block by block; each block is cut into a chunk a core at
// newlines outside quoted fields and the chunks are parsed side by side
// by encoding/csv. Errors name the line in the whole input, and the first
// bad row of the input is the one reported.
func (r *csvRows) readChunks(br *bufio.Reader, headerLine, blockBytes int, sizeHint int64) ([]orb.Point, error) {
	// About 21 bytes a row ("-12.345678,123.456789\n") at the least for
	// points as exported: room for all of them, so the result is not
	// copied as it grows.
	var pts []orb.Point
	if r.sink == nil {
		pts = make([]orb.Point, 0, min(max(sizeHint, 0)/21+16, 1<<28))
	}
	line := headerLine // lines before block
	workers := runtime.GOMAXPROCS(0)
	// Blocks start small and double: a small input costs no 32 MB buffer.
	size := min(blockBytes, 1<<20)
	// Two buffers in turn: the next block is read into one while the
	// other's chunks parse (fresh 32 MB buffers cost page faults).
	var spare []byte
	block, eof, err := r.readBlock(br, nil, nil, size)
	if err != nil {
		return nil, err
	}
	for {
		size = min(2*size, blockBytes)
		quoted := hasQuote(block, workers)
		ends := splitRecords(block, workers, quoted)
		if len(ends) == 0 && !eof && len(block) > csvMaxRecordBytes {
			// More than the bound without a record boundary: a record
			// longer than any of points, or a quote left open.
			return nil, r.longRecord(line)
		}
		if eof && (len(ends) == 0 || ends[len(ends)-1] < len(block)) {
			ends = append(ends, len(block)) // the last record needs no newline
		}
		// The chunks are parsed while the next block is read.
		parsed := r.startChunks(block, ends, line, quoted)
		done := 0
		if len(ends) > 0 {
			done = ends[len(ends)-1]
		}
		var next []byte
		var nextEOF bool
		var readErr error
		if !eof {
			next, nextEOF, readErr = r.readBlock(br, spare, block[done:], size)
		}
		got, lines, err := parsed()
		if err != nil {
			return nil, err
		}
		if readErr != nil {
			return nil, readErr
		}
		for _, g := range got {
			pts = r.keep(pts, g)
		}
		if eof {
			return pts, nil
		}
		line += lines
		spare = block[:cap(block)]
		block, eof = next, nextEOF
	}
}

// readBlock returns carry followed by up to size bytes of br, in buf when
// it has room, and whether br ended.
func (r *csvRows) readBlock(br *bufio.Reader, buf, carry []byte, size int) ([]byte, bool, error) {
	block := buf[:0]
	if cap(buf) < len(carry)+size {
		block = make([]byte, 0, len(carry)+size)
	}
	block = block[:len(carry)+size]
	copy(block, carry)
	n, err := io.ReadFull(br, block[len(carry):])
	eof := err == io.EOF || err == io.ErrUnexpectedEOF
	if err != nil && !eof {
		return nil, false, check.ReadError(r.name, err)
	}
	return block[:len(carry)+n], eof, nil
}

// keep appends got to pts, or hands it to the sink.
func (r *csvRows) keep(pts, got []orb.Point) []orb.Point {
	if r.sink != nil {
		r.sink(got)
		r.sunk += len(got)
		if r.idSink != nil && r.id >= 0 {
			r.idSink(r.ids[:len(got):len(got)])
			r.ids = r.ids[len(got):]
		}
		return pts
	}
	return append(pts, got...)
}

// longRecord is the error for a record longer than csvMaxRecordBytes on
// the line after line.
func (r *csvRows) longRecord(line int) error {
	return check.LineError(r.name, line+1, "a record longer than 1 MiB: refused (is a quote left open?)")
}

// splitRecords returns the ends of up to k chunks of block, each just
// after a newline outside quotes, the last at the last such newline (what
// follows it waits for the next block). Quotes are counted from the
// block's start, itself a record boundary; RFC 4180's doubled quotes
// count twice and change nothing. quoted says whether block holds a quote
// (hasQuote): without one every newline ends a record.
func splitRecords(block []byte, k int, quoted bool) []int {
	if !quoted {
		return splitPlain(block, k)
	}
	var ends []int
	pos, odd := 0, false // odd: an open quoted field at pos
	for c := 1; c <= k; c++ {
		target := len(block) * c / k
		if c == k {
			target = len(block)
		}
		end := -1
		for pos < len(block) {
			nl := bytes.IndexByte(block[pos:], '\n')
			if nl < 0 {
				break
			}
			odd = odd != (bytes.Count(block[pos:pos+nl], []byte{'"'})%2 == 1)
			pos += nl + 1
			if !odd {
				end = pos
				if pos >= target {
					break
				}
			}
		}
		if end > 0 && (len(ends) == 0 || end > ends[len(ends)-1]) {
			ends = append(ends, end)
		}
		if end < 0 || pos >= len(block) {
			break
		}
	}
	return ends
}

// hasQuote reports whether block holds a double quote, looking at k parts
// side by side (a 32 MB block is 3 ms of one core's scan, a tenth of the
// block's parse on 16).
func hasQuote(block []byte, k int) bool {
	if k <= 1 || len(block) < 1<<20 {
		return bytes.IndexByte(block, '"') >= 0
	}
	var found atomic.Bool
	parallel.Blocks(len(block), (len(block)+k-1)/k, k, func(_, lo, hi int) {
		if bytes.IndexByte(block[lo:hi], '"') >= 0 {
			found.Store(true)
		}
	})
	return found.Load()
}

// splitPlain is splitRecords for a block without quotes, where every
// newline ends a record.
func splitPlain(block []byte, k int) []int {
	var ends []int
	prev := 0
	for c := 1; c < k; c++ {
		target := max(len(block)*c/k, prev)
		i := bytes.IndexByte(block[target:], '\n')
		if i < 0 {
			break
		}
		ends, prev = append(ends, target+i+1), target+i+1
	}
	if last := bytes.LastIndexByte(block[prev:], '\n'); last >= 0 {
		ends = append(ends, prev+last+1)
	}
	return ends
}

// startChunks parses block[ends[i-1]:ends[i]] for every i side by side
// and returns the wait for each chunk's points and the block's line count,
// or the error of the first chunk that has one. line is the input's line
// count before block.
func (r *csvRows) startChunks(block []byte, ends []int, line int, quoted bool) func() ([][]orb.Point, int, error) {
	pts := make([][]orb.Point, len(ends))
	ids := make([][]string, len(ends))
	errs := make([]error, len(ends))
	lines := make([]int, len(ends)) // each chunk's newlines
	// Every worker counts its chunk's lines first: a chunk read through
	// encoding/csv waits for the counts before it to number its lines.
	var wg, counted sync.WaitGroup
	counted.Add(len(ends))
	start := 0
	for i, end := range ends {
		chunk := block[start:end]
		c := &csvRows{name: r.name, lat: r.lat, lon: r.lon, need: r.need, width: r.width, comma: r.comma, id: r.id}
		wg.Go(func() {
			lines[i] = bytes.Count(chunk, []byte{'\n'})
			counted.Done()
			if got, ok := c.plainPoints(chunk, quoted); ok {
				pts[i], ids[i] = got, c.ids
				return
			}
			// Quotes, or an error (whose report encoding/csv words).
			counted.Wait()
			c.lineBase = line
			for _, n := range lines[:i] {
				c.lineBase += n
			}
			c.ids = nil
			c.cr = newCSVReader(bufio.NewReaderSize(bytes.NewReader(chunk), 64<<10))
			c.cr.Comma = c.comma
			pts[i], errs[i] = c.readPoints(make([]orb.Point, 0, len(chunk)/24))
			ids[i] = c.ids
		})
		start = end
	}
	return func() ([][]orb.Point, int, error) {
		wg.Wait()
		total := 0
		for i := range ends {
			if errs[i] != nil {
				return nil, 0, errs[i]
			}
			r.ids = append(r.ids, ids[i]...)
			total += lines[i]
		}
		return pts, total, nil
	}
}

// plainPoints reads a chunk without quotes and with a one-byte delimiter
// without encoding/csv, as it would read it: lines end at newlines (a
// carriage return before one dropped), fields at delimiters, empty lines
// skipped. It reports false when it cannot (quotes in the chunk, looked
// for only when its block has some; a wide delimiter) or finds a row in
// error, which the caller reads again through encoding/csv for its report.
func (r *csvRows) plainPoints(chunk []byte, quoted bool) ([]orb.Point, bool) {
	if r.comma >= utf8.RuneSelf || r.comma == '\r' || r.comma == '\n' || (quoted && bytes.IndexByte(chunk, '"') >= 0) {
		return nil, false
	}
	comma := byte(r.comma)
	pts := make([]orb.Point, 0, len(chunk)/24)
	var rec []string
	for len(chunk) > 0 {
		nl := bytes.IndexByte(chunk, '\n')
		row := chunk
		if nl >= 0 {
			row, chunk = chunk[:nl], chunk[nl+1:]
		} else {
			chunk = nil
		}
		if n := len(row); n > 0 && row[n-1] == '\r' {
			row = row[:n-1]
		}
		if len(row) == 0 {
			continue
		}
		rec = splitFields(rec[:0], row, comma)
		p, ok, bad := r.parseRow(rec)
		if bad {
			return nil, false
		}
		if ok {
			pts = append(pts, p)
			if r.id >= 0 {
				r.ids = append(r.ids, strings.Clone(rec[r.id]))
			}
		}
	}
	return pts, true
}

// splitFields appends the fields of row (no quotes in it) to rec, as
// strings that share row's memory.
func splitFields(rec []string, row []byte, comma byte) []string {
	for {
		i := bytes.IndexByte(row, comma)
		if i < 0 {
			return append(rec, unsafe.String(unsafe.SliceData(row), len(row)))
		}
		rec = append(rec, unsafe.String(unsafe.SliceData(row), i))
		row = row[i+1:]
	}
}
