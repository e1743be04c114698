package arrowio

import (
	"encoding/binary"
	"math"
)

// A data page's header in Thrift's compact protocol, as arrow-go's page
// writer serializes parquet.thrift's PageHeader for a version 1 data page
// of a required column with statistics: the fields it sets, in its order,
// and no CRC (arrow-go writes none). The answer columns' pages are
// written without arrow-go's column writers (parquetPages), whose page
// header type is internal to arrow-go; the tests compare every byte with
// arrow-go's file.

// Compact protocol field types.
const (
	thriftI32    = 5
	thriftI64    = 6
	thriftBinary = 8
	thriftStruct = 12
)

// Parquet's enum values written in a page header.
const (
	pageTypeData = 0 // PageType.DATA_PAGE
	encodingRLE  = 3 // the (absent) levels' encoding
)

// pageHeaderRoom is more than the longest header appendPageHeader writes
// (about 100 bytes: five varints and two 8-byte minimum and maximum
// twice, with their field headers).
const pageHeaderRoom = 128

// pageHeader is what a data page's header says.
type pageHeader struct {
	uncompressed, compressed int
	values                   int
	encoding                 int32
	stats                    pageStats
	signed                   bool // legacy min and max too (a SIGNED sort order)
}

// appendPageHeader appends h as Thrift compact bytes.
func appendPageHeader(b []byte, h pageHeader) []byte {
	b = appendField(b, 0, 1, thriftI32)
	b = binary.AppendVarint(b, pageTypeData)
	b = appendField(b, 1, 2, thriftI32)
	b = binary.AppendVarint(b, int64(h.uncompressed))
	b = appendField(b, 2, 3, thriftI32)
	b = binary.AppendVarint(b, int64(h.compressed))
	b = appendField(b, 3, 5, thriftStruct) // data_page_header
	b = appendField(b, 0, 1, thriftI32)
	b = binary.AppendVarint(b, int64(h.values))
	b = appendField(b, 1, 2, thriftI32)
	b = binary.AppendVarint(b, int64(h.encoding))
	b = appendField(b, 2, 3, thriftI32)
	b = binary.AppendVarint(b, encodingRLE)
	b = appendField(b, 3, 4, thriftI32)
	b = binary.AppendVarint(b, encodingRLE)
	b = appendField(b, 4, 5, thriftStruct) // statistics
	b = appendStatistics(b, h.stats, h.signed)
	return append(b, 0, 0) // the data page header's stop, the page header's
}

// appendStatistics appends the fields of a Statistics struct and its
// stop: max and min where the sort order is signed (the deprecated
// fields, which arrow-go still fills), the null count (always 0), then
// max_value and min_value.
func appendStatistics(b []byte, s pageStats, signed bool) []byte {
	last := int16(0)
	if s.size > 0 && signed {
		b = appendField(b, 0, 1, thriftBinary)
		b = appendStat(b, s.max, s.size)
		b = appendField(b, 1, 2, thriftBinary)
		b = appendStat(b, s.min, s.size)
		last = 2
	}
	b = appendField(b, last, 3, thriftI64)
	b = binary.AppendVarint(b, 0)
	if s.size > 0 {
		b = appendField(b, 3, 5, thriftBinary)
		b = appendStat(b, s.max, s.size)
		b = appendField(b, 5, 6, thriftBinary)
		b = appendStat(b, s.min, s.size)
	}
	return append(b, 0)
}

// appendField appends a field header: the field's id as a delta from the
// last field's (every delta here is 1 to 15) and its type.
func appendField(b []byte, last, id int16, typ byte) []byte {
	return append(b, byte(id-last)<<4|typ)
}

// appendStat appends a statistic's value as a Thrift binary: its size
// and its bytes.
func appendStat(b []byte, bits uint64, size int) []byte {
	b = binary.AppendUvarint(b, uint64(size))
	return statBytes(b, bits, size)
}

// pageStats is a page's or a column chunk's minimum and maximum, as the
// bits of the column's physical type (size bytes of them), or size 0
// where no value orders (a page of NaN distances only).
type pageStats struct {
	min, max uint64
	size     int
}

// newPageStats is the statistics of a page whose least and greatest
// values have bits lo and hi, size bytes each.
func newPageStats(lo, hi uint64, size int) pageStats {
	return pageStats{min: lo, max: hi, size: size}
}

// statBytes appends the size (4 or 8) bytes of a value's bits, little
// endian, as Parquet's statistics hold a value.
func statBytes(b []byte, bits uint64, size int) []byte {
	if size == 4 {
		return binary.LittleEndian.AppendUint32(b, uint32(bits))
	}
	return binary.LittleEndian.AppendUint64(b, bits)
}

// minMaxInt is the least and greatest of v, which is not empty, in
// four lanes (the comparisons' chains are what take the time).
func minMaxInt[T statValue](v []T) (T, T) {
	lo0, lo1, lo2, lo3 := v[0], v[0], v[0], v[0]
	hi0, hi1, hi2, hi3 := v[0], v[0], v[0], v[0]
	i := 0
	for ; i+4 <= len(v); i += 4 {
		q := v[i : i+4 : i+4]
		lo0, lo1, lo2, lo3 = min(lo0, q[0]), min(lo1, q[1]), min(lo2, q[2]), min(lo3, q[3])
		hi0, hi1, hi2, hi3 = max(hi0, q[0]), max(hi1, q[1]), max(hi2, q[2]), max(hi3, q[3])
	}
	for _, x := range v[i:] {
		lo0, hi0 = min(lo0, x), max(hi0, x)
	}
	return min(lo0, lo1, lo2, lo3), max(hi0, hi1, hi2, hi3)
}

// minMaxFloat is the least and greatest of v but NaN, as arrow-go's
// statistics order them: a zero minimum is -0 and a zero maximum +0, and
// ok is false when every value is NaN. Go's min and max, in four lanes,
// answer where no value is NaN (they order -0 before +0, which the zeros'
// rule makes moot); a NaN among the values has them skipped one by one.
func minMaxFloat(v []float64) (lo, hi float64, ok bool) {
	lo, hi = math.Inf(1), math.Inf(-1)
	lo0, lo1, lo2, lo3 := lo, lo, lo, lo
	hi0, hi1, hi2, hi3 := hi, hi, hi, hi
	i := 0
	for ; i+4 <= len(v); i += 4 {
		q := v[i : i+4 : i+4]
		lo0, lo1, lo2, lo3 = min(lo0, q[0]), min(lo1, q[1]), min(lo2, q[2]), min(lo3, q[3])
		hi0, hi1, hi2, hi3 = max(hi0, q[0]), max(hi1, q[1]), max(hi2, q[2]), max(hi3, q[3])
	}
	lo, hi = min(lo0, lo1, lo2, lo3), max(hi0, hi1, hi2, hi3)
	if math.IsNaN(lo) || math.IsNaN(hi) {
		lo, hi, i = math.Inf(1), math.Inf(-1), 0
	}
	for _, x := range v[i:] {
		if x < lo {
			lo = x
		}
		if x > hi {
			hi = x
		}
	}
	if lo > hi {
		return 0, 0, false
	}
	if lo == 0 {
		lo = math.Copysign(0, -1)
	}
	if hi == 0 {
		hi = 0
	}
	return lo, hi, true
}
