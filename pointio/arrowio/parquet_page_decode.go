package arrowio

import (
	"encoding/binary"
	"errors"
)

// The page headers a coordinate column's pages carry, read from Thrift's
// compact protocol (the other side of parquet_page_header.go): the fields
// of PageHeader, DataPageHeader, DataPageHeaderV2 and DictionaryPageHeader
// that reading a flat FLOAT or DOUBLE column needs, every other field
// (statistics, CRC, index pages' headers) skipped whatever its type.
// arrow-go's own decoder of these structs is internal to it.

// More compact protocol field types than parquet_page_header.go writes.
const (
	thriftTrue   = 1
	thriftFalse  = 2
	thriftByte   = 3
	thriftI16    = 4
	thriftDouble = 7
	thriftList   = 9
	thriftSet    = 10
	thriftMap    = 11
)

// Page types and encodings the direct reader meets.
const (
	pageTypeDictionary = 2 // PageType.DICTIONARY_PAGE
	pageTypeDataV2     = 3 // PageType.DATA_PAGE_V2

	encodingPlain         = 0
	encodingPlainDict     = 2
	encodingRLEDictionary = 8

	thriftMaxSkipDepth = 32 // nesting a header's skipped fields may have
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
	if n <= 0 {
		if n == 0 {
			r.fail(errHeaderTruncated)
		} else {
			r.fail(errHeaderMalformed)
		}
		return 0
	}
	r.at += n
	return v
}

func (r *compactReader) varint() int64 {
	u := r.uvarint()
	return int64(u>>1) ^ -int64(u&1)
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

// skip passes over a value of type typ, nested at most depth deep.
func (r *compactReader) skip(typ byte, depth int) {
	if depth <= 0 {
		r.fail(errHeaderMalformed)
		return
	}
	switch typ {
	case thriftTrue, thriftFalse:
	case thriftByte:
		r.byte()
	case thriftI16, thriftI32, thriftI64:
		r.uvarint()
	case thriftDouble:
		r.take(8)
	case thriftBinary:
		r.take(r.uvarint())
	case thriftList, thriftSet:
		h := r.byte()
		n := uint64(h >> 4)
		if n == 15 {
			n = r.uvarint()
		}
		r.skipN(n, h&0x0f, depth)
	case thriftMap:
		n := r.uvarint()
		if n == 0 {
			return
		}
		kv := r.byte()
		for i := uint64(0); i < n && r.err == nil; i++ {
			r.skip(kv>>4, depth-1)
			r.skip(kv&0x0f, depth-1)
		}
	case thriftStruct:
		r.skipStruct(depth - 1)
	default:
		r.fail(errHeaderMalformed)
	}
}

// skipN passes over n elements of type typ; a boolean element is a byte
// in a list (not folded into a type as a field's is).
func (r *compactReader) skipN(n uint64, typ byte, depth int) {
	if typ == thriftTrue || typ == thriftFalse {
		r.take(n)
		return
	}
	for i := uint64(0); i < n && r.err == nil; i++ {
		r.skip(typ, depth-1)
	}
}

func (r *compactReader) skipStruct(depth int) {
	last := int16(0)
	for r.err == nil {
		id, typ, stop := r.field(last)
		if stop {
			return
		}
		r.skip(typ, depth)
		last = id
	}
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

// parsePageHeader reads the PageHeader that b begins with. The required
// fields (type, both sizes) must be there, as Thrift's generated reader
// requires, and those of the page's own header for data, v2 or dict to be
// set; a field of a type other than the one parquet.thrift gives is
// skipped, as that reader skips it.
func parsePageHeader(b []byte) (pageInfo, error) {
	r := compactReader{b: b}
	var p pageInfo
	var seen [3]bool // type, both sizes
	last := int16(0)
	for {
		id, typ, stop := r.field(last)
		if stop {
			break
		}
		switch {
		case id == 1 && typ == thriftI32:
			p.typ, seen[0] = r.i32(), true
		case id == 2 && typ == thriftI32:
			p.uncompressed, seen[1] = r.i32(), true
		case id == 3 && typ == thriftI32:
			p.compressed, seen[2] = r.i32(), true
		case id == 5 && typ == thriftStruct:
			p.data = r.dataPageHeader(&p)
		case id == 7 && typ == thriftStruct:
			p.dict = r.dictionaryPageHeader(&p)
		case id == 8 && typ == thriftStruct:
			p.v2 = r.dataPageHeaderV2(&p)
		default:
			r.skip(typ, thriftMaxSkipDepth)
		}
		last = id
	}
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
	last := int16(0)
	for {
		id, typ, stop := r.field(last)
		if stop {
			break
		}
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
		default:
			r.skip(typ, thriftMaxSkipDepth)
		}
		last = id
	}
	return n && enc && def && rep
}

// dictionaryPageHeader reads a DictionaryPageHeader.
func (r *compactReader) dictionaryPageHeader(p *pageInfo) bool {
	var n, enc bool
	last := int16(0)
	for {
		id, typ, stop := r.field(last)
		if stop {
			break
		}
		switch {
		case id == 1 && typ == thriftI32:
			p.values, n = r.i32(), true
		case id == 2 && typ == thriftI32:
			p.encoding, enc = r.i32(), true
		default:
			r.skip(typ, thriftMaxSkipDepth)
		}
		last = id
	}
	return n && enc
}

// dataPageHeaderV2 reads a DataPageHeaderV2.
func (r *compactReader) dataPageHeaderV2(p *pageInfo) bool {
	var seen [6]bool
	p.compressedV2 = true
	last := int16(0)
	for {
		id, typ, stop := r.field(last)
		if stop {
			break
		}
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
		case id == 7 && (typ == thriftTrue || typ == thriftFalse):
			p.compressedV2 = boolField(typ)
		default:
			r.skip(typ, thriftMaxSkipDepth)
		}
		last = id
	}
	return seen == [6]bool{true, true, true, true, true, true}
}
