package arrowio

import (
	"encoding/binary"
	"errors"
)

// The page headers a coordinate column's pages carry, read from Thrift's
// compact protocol (the other side of parquet_page_header.go): the fields
// of PageHeader, DataPageHeader, DataPageHeaderV2 and DictionaryPageHeader
// that reading a flat FLOAT or DOUBLE column needs, and the others
// parquet.thrift gives them (statistics, CRC), passed over. A field
// parquet.thrift does not give, or of another type, is an error, though
// Thrift's reader would skip it: a page header is read here only where
// arrow-go's reader (Thrift's) would read it too, so that the page reader
// never reads a page arrow-go would call corrupt (FuzzCoordPages found a
// flipped statistics byte that Thrift refuses and a skipping decoder
// read). arrow-go's own decoder of these structs is internal to it.

// More compact protocol field types than parquet_page_header.go writes.
const (
	thriftTrue  = 1
	thriftFalse = 2
)

// Page types and encodings the direct reader meets.
const (
	pageTypeDictionary = 2 // PageType.DICTIONARY_PAGE
	pageTypeDataV2     = 3 // PageType.DATA_PAGE_V2

	encodingPlain         = 0
	encodingPlainDict     = 2
	encodingRLEDictionary = 8
)

var (
	errHeaderTruncated = errors.New("page header truncated")
	errHeaderMalformed = errors.New("page header malformed")
)

// pageInfo is what a page's header says.
type pageInfo struct {
	typ                      int32
	uncompressed, compressed int32
	size                     int // the header's own bytes
	// data, v2 and dict: the page's own header is there, its required
	// fields set.
	data, v2, dict     bool
	values             int32 // data or dictionary page: num_values
	encoding           int32
	defEncoding        int32 // version 1 data page: definition levels' encoding
	nulls, rows        int32 // version 2
	defBytes, repBytes int32 // version 2: levels' bytes, uncompressed
	compressedV2       bool  // version 2: is_compressed (true unless said)
}

// compactReader reads compact protocol values from b; the first error
// stops it (every read after it returns zero).
type compactReader struct {
	b   []byte
	at  int
	err error
}

func (r *compactReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *compactReader) byte() byte {
	if r.err != nil || r.at >= len(r.b) {
		r.fail(errHeaderTruncated)
		return 0
	}
	c := r.b[r.at]
	r.at++
	return c
}

func (r *compactReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.at:])
	if !r.took(n) {
		return 0
	}
	return v
}

// varint reads a zigzag varint, as Thrift's compact protocol writes
// integers (binary.Varint's decoding of uvarint's bits).
func (r *compactReader) varint() int64 {
	u := r.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// took moves past a varint of n bytes (encoding/binary's count: 0 cut
// short, below 0 overflowing 64 bits), or fails.
func (r *compactReader) took(n int) bool {
	switch {
	case n == 0:
		r.fail(errHeaderTruncated)
		return false
	case n < 0:
		r.fail(errHeaderMalformed)
		return false
	}
	r.at += n
	return true
}

// i32 reads a zigzag varint that must fit an i32, as Thrift's reader
// requires.
func (r *compactReader) i32() int32 {
	v := r.varint()
	if v != int64(int32(v)) {
		r.fail(errHeaderMalformed)
		return 0
	}
	return int32(v)
}

// field reads a field header after the field last: its id and type, or
// stop true at the struct's end.
func (r *compactReader) field(last int16) (id int16, typ byte, stop bool) {
	h := r.byte()
	if r.err != nil || h == 0 {
		return 0, 0, true
	}
	typ = h & 0x0f
	if delta := int16(h >> 4); delta != 0 {
		return last + delta, typ, false
	}
	v := r.varint()
	if v != int64(int16(v)) {
		r.fail(errHeaderMalformed)
		return 0, 0, true
	}
	return int16(v), typ, false
}

// take passes over n bytes.
func (r *compactReader) take(n uint64) {
	if r.err != nil {
		return
	}
	if n > uint64(len(r.b)-r.at) {
		r.fail(errHeaderTruncated)
		return
	}
	r.at += int(n)
}

// boolField is a boolean field's value, which its type carries.
func boolField(typ byte) bool { return typ == thriftTrue }

func isBool(typ byte) bool { return typ == thriftTrue || typ == thriftFalse }

// fields reads the fields of the struct r is at, to its end: read takes
// each (its value too) and reports false for a field parquet.thrift does
// not give, which fails the header.
func (r *compactReader) fields(read func(id int16, typ byte) bool) {
	for last := int16(0); ; {
		id, typ, stop := r.field(last)
		if stop {
			return
		}
		if !read(id, typ) {
			r.fail(errHeaderMalformed)
		}
		last = id
	}
}

// parsePageHeader reads the PageHeader that b begins with. The required
// fields (type, both sizes) must be there, as Thrift's generated reader
// requires, and those of the page's own header for data, v2 or dict to be
// set.
func parsePageHeader(b []byte) (pageInfo, error) {
	r := compactReader{b: b}
	var p pageInfo
	var seen [3]bool // type, both sizes
	r.fields(func(id int16, typ byte) bool {
		switch {
		case id == 1 && typ == thriftI32:
			p.typ, seen[0] = r.i32(), true
		case id == 2 && typ == thriftI32:
			p.uncompressed, seen[1] = r.i32(), true
		case id == 3 && typ == thriftI32:
			p.compressed, seen[2] = r.i32(), true
		case id == 4 && typ == thriftI32:
			r.i32() // crc, which arrow-go checks only when asked
		case id == 5 && typ == thriftStruct:
			p.data = r.dataPageHeader(&p)
		case id == 7 && typ == thriftStruct:
			p.dict = r.dictionaryPageHeader(&p)
		case id == 8 && typ == thriftStruct:
			p.v2 = r.dataPageHeaderV2(&p)
		default:
			return false // index_page_header among them: no index page is read
		}
		return true
	})
	if r.err != nil {
		return pageInfo{}, r.err
	}
	if !seen[0] || !seen[1] || !seen[2] || p.uncompressed < 0 || p.compressed < 0 {
		return pageInfo{}, errHeaderMalformed
	}
	p.size = r.at
	return p, nil
}

// dataPageHeader reads a DataPageHeader; false: a required field missing.
func (r *compactReader) dataPageHeader(p *pageInfo) bool {
	var n, enc, def, rep bool
	r.fields(func(id int16, typ byte) bool {
		switch {
		case id == 1 && typ == thriftI32:
			p.values, n = r.i32(), true
		case id == 2 && typ == thriftI32:
			p.encoding, enc = r.i32(), true
		case id == 3 && typ == thriftI32:
			p.defEncoding, def = r.i32(), true
		case id == 4 && typ == thriftI32:
			r.i32()
			rep = true
		case id == 5 && typ == thriftStruct:
			r.statistics()
		default:
			return false
		}
		return true
	})
	return n && enc && def && rep
}

// dictionaryPageHeader reads a DictionaryPageHeader.
func (r *compactReader) dictionaryPageHeader(p *pageInfo) bool {
	var n, enc bool
	r.fields(func(id int16, typ byte) bool {
		switch {
		case id == 1 && typ == thriftI32:
			p.values, n = r.i32(), true
		case id == 2 && typ == thriftI32:
			p.encoding, enc = r.i32(), true
		case id == 3 && isBool(typ):
			// is_sorted
		default:
			return false
		}
		return true
	})
	return n && enc
}

// dataPageHeaderV2 reads a DataPageHeaderV2.
func (r *compactReader) dataPageHeaderV2(p *pageInfo) bool {
	var seen [6]bool
	p.compressedV2 = true
	r.fields(func(id int16, typ byte) bool {
		switch {
		case id == 1 && typ == thriftI32:
			p.values, seen[0] = r.i32(), true
		case id == 2 && typ == thriftI32:
			p.nulls, seen[1] = r.i32(), true
		case id == 3 && typ == thriftI32:
			p.rows, seen[2] = r.i32(), true
		case id == 4 && typ == thriftI32:
			p.encoding, seen[3] = r.i32(), true
		case id == 5 && typ == thriftI32:
			p.defBytes, seen[4] = r.i32(), true
		case id == 6 && typ == thriftI32:
			p.repBytes, seen[5] = r.i32(), true
		case id == 7 && isBool(typ):
			p.compressedV2 = boolField(typ)
		case id == 8 && typ == thriftStruct:
			r.statistics()
		default:
			return false
		}
		return true
	})
	return seen == [6]bool{true, true, true, true, true, true}
}

// statistics passes over a Statistics struct: max, min, max_value and
// min_value binary, null_count and distinct_count i64, the exactness
// flags bool.
func (r *compactReader) statistics() {
	r.fields(func(id int16, typ byte) bool {
		switch {
		case (id == 1 || id == 2 || id == 5 || id == 6) && typ == thriftBinary:
			r.take(r.uvarint())
		case (id == 3 || id == 4) && typ == thriftI64:
			r.varint()
		case (id == 7 || id == 8) && isBool(typ):
		default:
			return false
		}
		return true
	})
}
