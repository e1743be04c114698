package arrowio

import (
	"bytes"
	"fmt"
	"math"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// parquetPages writes the pages of an answer row group's fixed-width
// columns itself, the bytes arrow-go's writer writes for them (PLAIN or
// DELTA_BINARY_PACKED, uncompressed or Snappy, version 1 data pages with
// statistics, cut where arrow-go cuts them), and builds the group's
// metadata with arrow-go's metadata builders. arrow-go's column writers
// spend most of their time outside the encoding proper (per-batch
// statistics, encoder buffers, page copies), while here a distance page is
// the answers' own memory behind a header and a delta page is one pass over
// its values; BenchmarkAnswerGroupEncode measures both.
//
// It covers the properties answerProps gives; newParquetPages refuses a
// schema or properties it does not (encodeGroup then writes the group).
type parquetPages struct {
	cols     []pageColumn
	schema   *schema.Schema
	props    *parquet.WriterProperties
	pageSize int // bytes of values after which a page ends
	batch    int // values added at a time, between checks of pageSize
}

// pageColumn is how a column's pages are written.
type pageColumn struct {
	kind     arrow.Type // INT32, UINT32, INT64 or FLOAT64
	encoding parquet.Encoding
	codec    compress.Codec // nil: uncompressed
	signed   bool           // a SIGNED sort order: the legacy min and max too
}

// newParquetPages is the page writer of fields with answerProps, or nil
// where one of them is not a column it writes.
func newParquetPages(fields *arrow.Schema) *parquetPages {
	props := answerProps()
	sc, err := pqarrow.ToParquet(fields, props, pqarrow.DefaultWriterProps())
	if err != nil || !pagesProps(props) {
		return nil
	}
	p := &parquetPages{schema: sc, props: props, pageSize: int(props.DataPageSize()), batch: int(props.WriteBatchSize())}
	for i, f := range fields.Fields() {
		col, ok := newPageColumn(f, sc.Column(i), props)
		if !ok {
			return nil
		}
		p.cols = append(p.cols, col)
	}
	return p
}

// pagesProps is whether props's file-wide settings are those the page
// writer writes: version 1 data pages, a batch a multiple of a delta
// block, no encryption or sorting columns.
func pagesProps(props *parquet.WriterProperties) bool {
	return props.DataPageVersion() == parquet.DataPageV1 && props.WriteBatchSize() > 0 &&
		props.WriteBatchSize()%deltaBlockValues == 0 && props.DataPageSize() > 0 &&
		props.FileEncryptionProperties() == nil && len(props.SortingColumns()) == 0
}

// newPageColumn is how field f (column c of the Parquet schema) is
// written, or false where the page writer does not write it.
func newPageColumn(f arrow.Field, c *schema.Column, props *parquet.WriterProperties) (pageColumn, bool) {
	path := c.Path()
	col := pageColumn{kind: f.Type.ID(), encoding: props.EncodingFor(path), signed: c.SortOrder() == schema.SortSIGNED}
	switch col.kind {
	case arrow.INT32, arrow.UINT32, arrow.INT64:
	case arrow.FLOAT64:
		if col.encoding != parquet.Encodings.Plain {
			return col, false
		}
	default:
		return col, false
	}
	if f.Nullable || c.MaxDefinitionLevel() != 0 || c.MaxRepetitionLevel() != 0 ||
		props.DictionaryEnabledFor(path) || !props.StatisticsEnabledFor(path) || props.PageIndexEnabledFor(path) ||
		props.BloomFilterEnabledFor(path) || props.MaxStatsSizeFor(path) < 8 {
		return col, false
	}
	if col.encoding != parquet.Encodings.Plain && col.encoding != parquet.Encodings.DeltaBinaryPacked {
		return col, false
	}
	switch props.CompressionFor(path) {
	case compress.Codecs.Uncompressed:
	case compress.Codecs.Snappy:
		codec, err := compress.GetCodec(compress.Codecs.Snappy)
		if err != nil {
			return col, false
		}
		col.codec = codec
	default:
		return col, false
	}
	return col, true
}

// width is the bytes of a value.
func (c pageColumn) width() int {
	if c.kind == arrow.INT64 || c.kind == arrow.FLOAT64 {
		return 8
	}
	return 4
}

// pieceOf is a stretch of a column chunk's bytes: buf[lo:hi] of the
// column's buffer, or ext, values written as they are.
type pieceOf struct {
	lo, hi int
	ext    []byte
}

// columnPages is a column chunk written: its bytes, in pieces, and what
// its metadata says.
type columnPages struct {
	pieces                   []pieceOf
	stats                    pageStats
	pages                    int
	uncompressed, compressed int64
}

// encode writes rec as one row group, as encodeGroup does, its columns
// side by side, each into its buffers of s.bufs (grown to two a column),
// its column chunks and body in s's too. A group of no rows is left to
// encodeGroup (arrow-go writes its empty column chunks its own way).
func (p *parquetPages) encode(rec arrow.RecordBatch, arrowSchema *arrow.Schema, s *encodeScratch, empty *emptyFooter) (encoded, error) {
	n := int(rec.NumRows())
	bufs := &s.bufs
	if n == 0 || int(rec.NumCols()) != len(p.cols) {
		return encodeGroup(rec, arrowSchema, bufs, empty)
	}
	if len(*bufs) < 2*len(p.cols) {
		*bufs = append(*bufs, make([]bytes.Buffer, 2*len(p.cols)-len(*bufs))...)
	}
	s.cols = grow(s.cols, len(p.cols)) // each keeps its pieces' room
	cols := s.cols
	var wg sync.WaitGroup
	for c := range p.cols {
		data, err := columnBytes(rec.Column(c), n, p.cols[c].width())
		if err != nil {
			wg.Wait()
			return encoded{}, err
		}
		wg.Go(func() {
			cols[c] = p.cols[c].write(data, n, p.pageSize, p.batch, &(*bufs)[c], &(*bufs)[len(p.cols)+c], cols[c].pieces[:0])
		})
	}
	wg.Wait()
	meta, err := p.groupMeta(cols, n, arrowSchema, empty)
	if err != nil {
		return encoded{}, err
	}
	body := s.body[:0]
	for c := range cols {
		all := (*bufs)[c].Bytes()
		for _, pc := range cols[c].pieces {
			if pc.ext != nil {
				body = append(body, pc.ext)
			} else {
				body = append(body, all[pc.lo:pc.hi])
			}
		}
	}
	s.body = body
	return encoded{body: body, meta: meta}, nil
}

// columnBytes is the values of a fixed-width array of n values without
// nulls, width bytes each, as bytes.
func columnBytes(a arrow.Array, n, width int) ([]byte, error) {
	d := a.Data()
	if a.NullN() != 0 || len(d.Buffers()) < 2 || d.Buffers()[1] == nil {
		return nil, fmt.Errorf("parquet: a column of %d nulls", a.NullN())
	}
	b := d.Buffers()[1].Bytes()
	lo, hi := d.Offset()*width, (d.Offset()+n)*width
	if hi > len(b) {
		return nil, fmt.Errorf("parquet: a column of %d bytes for %d values", len(b), n)
	}
	return b[lo:hi], nil
}

// write writes the column chunk of the n values data into out (scratch:
// room for a delta page before compression), page by page, its pieces
// appended to pieces.
func (c pageColumn) write(data []byte, n, pageSize, batch int, out, scratch *bytes.Buffer, pieces []pieceOf) columnPages {
	out.Reset()
	b := out.Bytes()
	cp := columnPages{pieces: pieces}
	for lo := 0; lo < n; {
		var hi int
		b, hi = c.appendPage(b, &cp, data, lo, n, pageSize, batch, scratch)
		lo = hi
	}
	*out = *bytes.NewBuffer(b)
	return cp
}

// appendPage appends the page of the values from lo on (the column's n)
// to b, its pieces and sizes to cp, and returns b and where the page
// ends.
func (c pageColumn) appendPage(b []byte, cp *columnPages, data []byte, lo, n, pageSize, batch int, scratch *bytes.Buffer) ([]byte, int) {
	w := c.width()
	b = grow(b, len(b)+pageHeaderRoom)
	payload := len(b) // where the page's values begin in b
	var hi, raw int
	var ext []byte
	var st pageStats
	switch {
	case c.encoding == parquet.Encodings.DeltaBinaryPacked:
		// Encoded in place, or into scratch to be compressed into b.
		enc := b
		if c.codec != nil {
			scratch.Reset()
			enc = scratch.Bytes()
		}
		enc, at, values, dst := c.appendDelta(enc, data[lo*w:n*w], pageSize, batch)
		hi, raw, st = lo+values, len(enc)-at, dst
		if c.codec == nil {
			b, payload = enc, at
		} else {
			*scratch = *bytes.NewBuffer(enc)
			b = appendCompressed(b, c.codec, enc[at:])
		}
	default:
		hi = min(n, lo+plainPageValues(w, pageSize, batch))
		raw, st = (hi-lo)*w, c.stats(data[lo*w:hi*w])
		if c.codec != nil {
			b = appendCompressed(b, c.codec, data[lo*w:hi*w])
		} else {
			ext = data[lo*w : hi*w]
		}
	}
	stored := raw
	if ext == nil {
		stored = len(b) - payload
	}
	var h [pageHeaderRoom]byte
	hdr := appendPageHeader(h[:0], pageHeader{uncompressed: raw, compressed: stored, values: hi - lo,
		encoding: int32(c.encoding), stats: st, signed: c.signed})
	at := payload - len(hdr) // after room: pageHeaderRoom bounds every header
	copy(b[at:], hdr)
	cp.pieces = append(cp.pieces, pieceOf{lo: at, hi: len(b)})
	if ext != nil {
		cp.pieces = append(cp.pieces, pieceOf{ext: ext})
	}
	cp.stats = c.merge(cp.stats, st, cp.pages == 0)
	cp.pages++
	cp.uncompressed += int64(len(hdr) + raw)
	cp.compressed += int64(len(hdr) + stored)
	return b, hi
}

// appendDelta appends the delta page of the values data holds, from its
// first on, as appendDeltaPage, and returns the page's statistics too.
func (c pageColumn) appendDelta(b, data []byte, pageSize, batch int) ([]byte, int, int, pageStats) {
	switch c.kind {
	case arrow.INT64:
		b, at, end, r := appendDeltaPage[int64, int64](b, view[int64](data), pageSize, batch)
		return b, at, end, newPageStats(uint64(r.lo), uint64(r.hi), 8)
	case arrow.UINT32:
		b, at, end, r := appendDeltaPage[int32, uint32](b, view[int32](data), pageSize, batch)
		return b, at, end, newPageStats(uint64(r.lo), uint64(r.hi), 4)
	}
	b, at, end, r := appendDeltaPage[int32, int32](b, view[int32](data), pageSize, batch)
	return b, at, end, newPageStats(uint64(uint32(r.lo)), uint64(uint32(r.hi)), 4)
}

// plainPageValues is how many values a PLAIN page holds: arrow-go's
// writer ends a page after the first batch that brings its values to
// pageSize bytes.
func plainPageValues(width, pageSize, batch int) int {
	perBatch := width * batch
	return (pageSize + perBatch - 1) / perBatch * batch
}

// appendCompressed appends src compressed by codec.
func appendCompressed(b []byte, codec compress.Codec, src []byte) []byte {
	at := len(b)
	bound := int(codec.CompressBound(int64(len(src))))
	b = grow(b, at+bound)
	out := codec.Encode(b[at:], src)
	if len(out) > 0 && &out[0] != &b[at] {
		return append(b[:at], out...)
	}
	return b[:at+len(out)]
}

// stats is the statistics of the values data holds.
func (c pageColumn) stats(data []byte) pageStats {
	switch c.kind {
	case arrow.INT32:
		lo, hi := minMaxInt(view[int32](data))
		return newPageStats(uint64(uint32(lo)), uint64(uint32(hi)), 4)
	case arrow.UINT32:
		lo, hi := minMaxInt(view[uint32](data))
		return newPageStats(uint64(lo), uint64(hi), 4)
	case arrow.INT64:
		lo, hi := minMaxInt(view[int64](data))
		return newPageStats(uint64(lo), uint64(hi), 8)
	}
	lo, hi, ok := minMaxFloat(view[float64](data))
	if !ok {
		return pageStats{}
	}
	return newPageStats(math.Float64bits(lo), math.Float64bits(hi), 8)
}

// merge is the statistics of two runs of values, a's and b's (first: a
// holds none yet).
func (c pageColumn) merge(a, b pageStats, first bool) pageStats {
	if first || a.size == 0 {
		return b
	}
	if b.size == 0 {
		return a
	}
	lo, hi := a.min, a.max
	if c.less(b.min, lo) {
		lo = b.min
	}
	if c.less(hi, b.max) {
		hi = b.max
	}
	return newPageStats(lo, hi, a.size)
}

// less orders two values' bits as the column's sort order does.
func (c pageColumn) less(x, y uint64) bool {
	switch c.kind {
	case arrow.INT32:
		return int32(x) < int32(y)
	case arrow.UINT32:
		return uint32(x) < uint32(y)
	case arrow.INT64:
		return int64(x) < int64(y)
	}
	return math.Float64frombits(x) < math.Float64frombits(y)
}

// groupMeta is the metadata of a file of the schema holding the group
// whose column chunks cols are, laid out from the file's offset 4 on, as
// encodeGroup makes it: empty's footer with the group's row group, built
// by arrow-go's metadata builders as its column writers build it.
func (p *parquetPages) groupMeta(cols []columnPages, n int, arrowSchema *arrow.Schema, empty *emptyFooter) (*metadata.FileMetaData, error) {
	fb := metadata.NewFileMetadataBuilder(p.schema, p.props, nil)
	rg := fb.AppendRowGroup()
	rg.SetNumRows(n)
	at := int64(4)
	for c, cp := range cols {
		cb := rg.NextColumnChunk()
		cb.SetStats(p.cols[c].chunkStats(cp.stats))
		err := cb.Finish(metadata.ChunkMetaInfo{NumValues: int64(n), IndexPageOffset: -1, DataPageOffset: at,
			CompressedSize: cp.compressed, UncompressedSize: cp.uncompressed}, false, false,
			metadata.EncodingStats{DataEncodingStats: map[parquet.Encoding]int32{p.cols[c].encoding: int32(cp.pages)}})
		if err != nil {
			return nil, err
		}
		at += cp.compressed
	}
	if err := rg.Finish(0, 0); err != nil {
		return nil, err
	}
	one, err := fb.Finish()
	if err != nil {
		return nil, err
	}
	meta, err := empty.meta(arrowSchema)
	if err != nil {
		return nil, err
	}
	meta.RowGroups = append(meta.RowGroups[:0], one.RowGroups...)
	meta.NumRows = int64(n)
	return meta, nil
}

// chunkStats is a column chunk's statistics as its metadata holds them.
func (c pageColumn) chunkStats(s pageStats) metadata.EncodedStatistics {
	var e metadata.EncodedStatistics
	if s.size > 0 {
		e.SetMax(statBytes(nil, s.max, s.size))
		e.SetMin(statBytes(nil, s.min, s.size))
	}
	e.SetNullCount(0)
	e.Signed = c.signed
	return e
}
