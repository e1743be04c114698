package arrowio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// coordPages reads a row group's latitude and longitude columns straight
// from their pages into radian columns, as parquetPages writes the answer
// columns' pages: a column chunk read by one ReadAt into a buffer of the
// reader's, each page decompressed into another by arrow-go's codecs, its
// definition levels checked (a page without nulls is one run), its PLAIN
// values or dictionary indices converted to radians as they are copied.
// arrow-go's reader spends most of a coordinate's time around the values
// (copies through its record builder, a dictionary grown per lookup, the
// levels decoded one by one, a table a group allocated and dropped) and
// radiansOf then passes over them again; BenchmarkParquetCoordPages
// measures both.
//
// It covers flat, optional or required, FLOAT or DOUBLE columns read as
// float32 or float64, unencrypted, in version 1 or 2 data pages of PLAIN or
// dictionary encoding under any codec arrow-go has. Anything else it meets
// (another encoding, a null, a value out of range, a page it cannot make
// sense of) is an error, and the caller reads the group through arrow-go
// instead, whose result or error stands: bad input is reported exactly as
// before.
type coordPages struct {
	f           *os.File
	md          *metadata.FileMetaData
	lat, lon    coordColumn
	limit       int64     // the largest buffer a page may need (parquetAllocLimit)
	chunk       []byte    // a column chunk's bytes
	page, page2 []byte    // a page decompressed (page2: a version 2 page's values)
	dict        []float64 // a chunk's dictionary in radians, NaN where out of range
	dictBad     bool      // some entry is NaN
	codecs      map[compress.Compression]compress.Codec
}

// coordColumn is a coordinate column as the page reader reads it.
type coordColumn struct {
	leaf     int
	float    bool // FLOAT, 4 bytes a value (else DOUBLE)
	optional bool // definition levels of width 1 precede the values
	limit    float64
}

// coordPagesOn is whether the page reader is used: the tests turn it off
// to compare with arrow-go's reader. A reader takes it when it opens the
// file (columnSource.noPages), not as its goroutines start.
var coordPagesOn = true

// errNotDirect is an input the page reader leaves to arrow-go's.
var errNotDirect = errors.New("not read by the page reader")

// newCoordPages is the page reader of src's coordinates in the file rdr
// (fr its Arrow reader), or nil where they are not columns it reads. A
// panic of arrow-go's on corrupt metadata is no page reader: arrow-go's
// own reader then meets the metadata and says what it says of it.
func (src *columnSource) newCoordPages(rdr *file.Reader, fr *pqarrow.FileReader) (p *coordPages) {
	defer func() {
		if recover() != nil {
			p = nil
		}
	}()
	if src.noPages || src.geometry != "" || src.id != "" || rdr == nil || fr == nil {
		return nil
	}
	md := rdr.MetaData()
	// Old parquet-mr files leave the dictionary page's header out of the
	// chunk's size, which arrow-go pads (PARQUET-816).
	if md.WriterVersion().LessThan(metadata.Parquet816FixedVersion) {
		return nil
	}
	as, err := fr.Schema()
	if err != nil {
		return nil
	}
	lat, ok1 := coordColumnOf(md, as, src.lat, 90)
	lon, ok2 := coordColumnOf(md, as, src.lon, 180)
	if !ok1 || !ok2 || lat.leaf == lon.leaf {
		return nil
	}
	f, err := os.Open(src.path)
	if err != nil {
		return nil
	}
	return &coordPages{f: f, md: md, lat: lat, lon: lon, limit: parquetAllocLimit(md, fileSize(src.path))}
}

// coordColumnOf is the top-level column name if the page reader reads
// it: one flat leaf, FLOAT or DOUBLE, which arrow-go reads as float32 or
// float64 (not a dictionary or extension type an Arrow schema stored in
// the file asks for, which decodeFloats refuses).
func coordColumnOf(md *metadata.FileMetaData, as *arrow.Schema, name string, limit float64) (coordColumn, bool) {
	leaf := md.Schema.ColumnIndexByName(name)
	if leaf < 0 {
		return coordColumn{}, false
	}
	c := md.Schema.Column(leaf)
	if c.MaxRepetitionLevel() != 0 || c.MaxDefinitionLevel() > 1 || c.SchemaNode().Parent() != md.Schema.Root() {
		return coordColumn{}, false
	}
	want := arrow.FLOAT64
	switch c.PhysicalType() {
	case parquet.Types.Double:
	case parquet.Types.Float:
		want = arrow.FLOAT32
	default:
		return coordColumn{}, false
	}
	idx := as.FieldIndices(name)
	if len(idx) != 1 || as.Field(idx[0]).Type.ID() != want {
		return coordColumn{}, false
	}
	return coordColumn{leaf: leaf, float: want == arrow.FLOAT32, optional: c.MaxDefinitionLevel() == 1, limit: limit}, true
}

// Close closes the reader's file.
func (p *coordPages) Close() error { return p.f.Close() }

// readGroup writes row group g's latitudes and longitudes, in radians,
// into lat and lon (its rows long); an error leaves them part written.
func (p *coordPages) readGroup(g int, lat, lon []float64) (err error) {
	// A codec may panic on a corrupt block: arrow-go's reader then meets
	// the block and says what it says of it.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: panic %v", errNotDirect, r)
		}
	}()
	if g < 0 || g >= p.md.NumRowGroups() {
		return errNotDirect
	}
	rg := p.md.RowGroup(g)
	if err := p.column(rg, p.lat, lat); err != nil {
		return err
	}
	return p.column(rg, p.lon, lon)
}

// pageEncodings reports whether a chunk whose metadata lists encs may be
// read here: one listing another encoding (BYTE_STREAM_SPLIT, the DELTA
// ones) goes to arrow-go before its bytes are read, not after.
func pageEncodings(encs []parquet.Encoding) bool {
	for _, e := range encs {
		switch e {
		case parquet.Encodings.Plain, parquet.Encodings.PlainDict, parquet.Encodings.RLEDict, parquet.Encodings.RLE:
		default:
			return false
		}
	}
	return true
}

// column reads column c's chunk in rg into dst, a value a row.
func (p *coordPages) column(rg *metadata.RowGroupMetaData, c coordColumn, dst []float64) error {
	cc, err := rg.ColumnChunk(c.leaf)
	if err != nil {
		return err
	}
	if cc.CryptoMetadata() != nil || cc.NumValues() != int64(len(dst)) || !pageEncodings(cc.Encodings()) {
		return errNotDirect
	}
	codec, err := p.codec(cc.Compression())
	if err != nil {
		return err
	}
	buf, err := p.readChunk(cc)
	if err != nil {
		return err
	}
	pc := pageCodec{codec: codec, none: cc.Compression() == compress.Codecs.Uncompressed}
	read, dict := 0, false
	for read < len(dst) {
		h, err := parsePageHeader(buf)
		if err != nil {
			return err
		}
		if !pageSizesRead(h) || int64(h.compressed) > int64(len(buf)-h.size) {
			return errNotDirect
		}
		body := buf[h.size : h.size+int(h.compressed)]
		buf = buf[h.size+int(h.compressed):]
		n := 0
		switch {
		case h.typ == pageTypeDictionary && h.dict && !dict && read == 0:
			err = p.dictionary(h, body, pc, c)
			dict = true
		case h.typ == pageTypeData && h.data:
			n, err = p.dataPage(h, body, pc, c, dst[read:], dict)
		case h.typ == pageTypeDataV2 && h.v2:
			n, err = p.dataPageV2(h, body, pc, c, dst[read:], dict)
		default:
			err = errNotDirect
		}
		if err != nil {
			return err
		}
		read += n
	}
	return nil
}

// codec is the codec of compression c, asked of arrow-go once a reader
// rather than once a column chunk.
func (p *coordPages) codec(c compress.Compression) (compress.Codec, error) {
	if codec, ok := p.codecs[c]; ok {
		return codec, nil
	}
	codec, err := compress.GetCodec(c)
	if err != nil {
		return nil, err
	}
	if p.codecs == nil {
		p.codecs = make(map[compress.Compression]compress.Codec)
	}
	p.codecs[c] = codec
	return codec, nil
}

// maxPageHeader is more than any header the page reader reads: arrow-go
// refuses one that does not fit 4 MiB (and header statistics are 8 bytes
// a value).
const maxPageHeader = 1 << 20

// pageSizesRead is whether arrow-go's reader (with geoknn's reader
// properties, the defaults) takes a page of header h's sizes, which the
// page reader must then refuse too.
func pageSizesRead(h pageInfo) bool {
	return h.size <= maxPageHeader && int64(h.compressed) <= parquet.DefaultMaxCompressedPageSize &&
		int64(h.uncompressed) <= parquet.DefaultMaxUncompressedPageSize
}

// readChunk reads a column chunk's bytes, from its first page (the
// dictionary's, where it comes first) as arrow-go's reader finds it.
func (p *coordPages) readChunk(cc *metadata.ColumnChunkMetaData) ([]byte, error) {
	start := cc.DataPageOffset()
	if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && start > cc.DictionaryPageOffset() {
		start = cc.DictionaryPageOffset()
	}
	n := cc.TotalCompressedSize()
	if start < 0 || n < 0 || n > p.limit {
		return nil, errNotDirect
	}
	p.chunk = grow(p.chunk[:0], int(n))
	if _, err := p.f.ReadAt(p.chunk, start); err != nil {
		return nil, err
	}
	return p.chunk, nil
}

// pageCodec is a column chunk's codec.
type pageCodec struct {
	codec compress.Codec
	none  bool // uncompressed: a page's bytes are its body
}

// decompress is a page body of size bytes uncompressed, decompressed into
// *buf (grown to it) unless the codec is none.
func (p *coordPages) decompress(pc pageCodec, body []byte, size int, buf *[]byte) ([]byte, error) {
	if pc.none {
		if len(body) != size {
			return nil, errNotDirect
		}
		return body, nil
	}
	if size < 0 || int64(size) > p.limit {
		return nil, errNotDirect
	}
	*buf = grow((*buf)[:0], size)
	out, err := compress.Decode(pc.codec, *buf, body)
	if err != nil {
		return nil, err
	}
	if len(out) != size {
		return nil, errNotDirect
	}
	return out, nil
}

// dictionary decodes a dictionary page into p.dict, in radians.
func (p *coordPages) dictionary(h pageInfo, body []byte, pc pageCodec, c coordColumn) error {
	if h.encoding != encodingPlain && h.encoding != encodingPlainDict {
		return errNotDirect
	}
	data, err := p.decompress(pc, body, int(h.uncompressed), &p.page)
	if err != nil {
		return err
	}
	n := int(h.values)
	if n < 0 || len(data) != n*c.width() {
		return errNotDirect
	}
	p.dict = grow(p.dict[:0], n)
	p.dictBad = !dictRadians(data, c, p.dict)
	return nil
}

// dataPage reads a version 1 data page into dst's first values: levels
// and values compressed together.
func (p *coordPages) dataPage(h pageInfo, body []byte, pc pageCodec, c coordColumn, dst []float64, dict bool) (int, error) {
	n := int(h.values)
	if n < 0 || n > len(dst) {
		return 0, errNotDirect
	}
	data, err := p.decompress(pc, body, int(h.uncompressed), &p.page)
	if err != nil {
		return 0, err
	}
	if c.optional {
		if h.defEncoding != encodingRLE || len(data) < 4 {
			return 0, errNotDirect
		}
		size := binary.LittleEndian.Uint32(data)
		if uint64(size) > uint64(len(data)-4) {
			return 0, errNotDirect
		}
		if err := presentLevels(data[4:4+size], n); err != nil {
			return 0, err
		}
		data = data[4+size:]
	}
	return n, p.values(h.encoding, data, c, dst[:n], dict)
}

// dataPageV2 reads a version 2 data page: levels uncompressed before the
// values, which alone may be compressed.
func (p *coordPages) dataPageV2(h pageInfo, body []byte, pc pageCodec, c coordColumn, dst []float64, dict bool) (int, error) {
	n := int(h.values)
	if n < 0 || n > len(dst) || h.rows != h.values || h.nulls != 0 || h.repBytes != 0 || h.defBytes < 0 ||
		int(h.defBytes) > len(body) || int(h.defBytes) > int(h.uncompressed) || (!c.optional && h.defBytes != 0) {
		return 0, errNotDirect
	}
	if c.optional {
		if err := presentLevels(body[:h.defBytes], n); err != nil {
			return 0, err
		}
	}
	vals, size := body[h.defBytes:], int(h.uncompressed-h.defBytes)
	if h.compressedV2 {
		var err error
		if vals, err = p.decompress(pc, vals, size, &p.page2); err != nil {
			return 0, err
		}
	} else if len(vals) != size {
		return 0, errNotDirect
	}
	return n, p.values(h.encoding, vals, c, dst[:n], dict)
}

// presentLevels is nil where the definition levels say n values present:
// a null is left to arrow-go's reader, whose error names its row.
func presentLevels(levels []byte, n int) error {
	ok, err := allPresent(levels, n)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: a null", errNotDirect)
	}
	return nil
}

// values writes a page's values, PLAIN or dictionary indices, into dst
// in radians.
func (p *coordPages) values(encoding int32, b []byte, c coordColumn, dst []float64, dict bool) error {
	switch {
	case encoding == encodingPlain:
		if !plainRadians(b, c, dst) {
			return fmt.Errorf("%w: a value out of range", errNotDirect)
		}
		return nil
	case (encoding == encodingRLEDictionary || encoding == encodingPlainDict) && dict:
		if err := gatherIndices(b, p.dict, dst); err != nil {
			return err
		}
		if p.dictBad && slices.ContainsFunc(dst, math.IsNaN) {
			return fmt.Errorf("%w: a value out of range", errNotDirect)
		}
		return nil
	}
	return errNotDirect
}

// width is the bytes of a value.
func (c coordColumn) width() int {
	if c.float {
		return 4
	}
	return 8
}

// plainRadians converts PLAIN values, degrees, to radians in dst with
// radiansOf's operations (the same bits), false where a value is out of
// range or the bytes are not len(dst) values.
func plainRadians(b []byte, c coordColumn, dst []float64) bool {
	if len(b) != c.width()*len(dst) {
		return false
	}
	if c.float {
		return toRadians[float32](b, c.limit, dst, false)
	}
	return toRadians[float64](b, c.limit, dst, false)
}

// dictRadians converts a PLAIN dictionary to radians in dst, an entry out
// of range NaN (no degree in range gives NaN): only the rows that name it
// are errors. false: some entry is NaN.
func dictRadians(b []byte, c coordColumn, dst []float64) bool {
	if c.float {
		return toRadians[float32](b, c.limit, dst, true)
	}
	return toRadians[float64](b, c.limit, dst, true)
}

// coordType is a coordinate column's physical type: FLOAT or DOUBLE.
type coordType interface{ float32 | float64 }

// toRadians converts the values of b, degrees, one for each of dst, to
// radians in dst with radiansOf's operations (the same bits). A value
// outside [-limit, limit], or NaN, ends it with false; where keep, it is
// NaN in dst instead and the rest are converted, false at the end.
func toRadians[T coordType](b []byte, limit float64, dst []float64, keep bool) bool {
	ok := true
	for i := range dst {
		v := loadCoord[T](b, i)
		if !(v >= -limit && v <= limit) {
			if !keep {
				return false
			}
			dst[i], ok = math.NaN(), false
			continue
		}
		dst[i] = v * math.Pi / 180
	}
	return ok
}

// loadCoord is the i-th little-endian T of b.
func loadCoord[T coordType](b []byte, i int) float64 {
	var zero T
	if unsafe.Sizeof(zero) == 4 {
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i : 4*i+4])))
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b[8*i : 8*i+8]))
}
