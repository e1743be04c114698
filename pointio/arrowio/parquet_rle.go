package arrowio

import (
	"encoding/binary"
	"errors"
)

// Parquet's RLE / bit-packing hybrid, as definition levels and dictionary
// indices are written: runs, each a varint header whose low bit says a
// bit-packed run (header>>1 groups of eight values, width bits each, least
// significant first) or a repeated one (header>>1 times a value of
// ceil(width/8) little-endian bytes).

var errRunsShort = errors.New("RLE runs end early")

// runHeader reads a run's header from b: the values it holds, whether they
// are bit-packed, and the header's bytes.
func runHeader(b []byte) (count uint64, packed bool, n int) {
	h, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, false, 0
	}
	if h&1 == 1 {
		if h>>1 > 1<<31 {
			return 0, false, 0 // more groups than any page holds
		}
		return (h >> 1) * 8, true, n
	}
	return h >> 1, false, n
}

// allPresent reports whether the definition levels in b (width 1, the
// levels of a flat optional column) are n ones: every value present. A
// page without nulls is one repeated run of 1, read in one step.
func allPresent(b []byte, n int) (bool, error) {
	for n > 0 {
		count, packed, h := runHeader(b)
		if h == 0 || count == 0 {
			return false, errRunsShort
		}
		b = b[h:]
		take := int(min(count, uint64(n)))
		if !packed {
			if len(b) < 1 {
				return false, errRunsShort
			}
			if b[0] != 1 {
				return false, nil
			}
			b = b[1:]
			n -= take
			continue
		}
		size := count / 8 // bytes: width 1
		if uint64(len(b)) < size {
			return false, errRunsShort
		}
		if !onesPacked(b[:size], take) {
			return false, nil
		}
		b = b[size:]
		n -= take
	}
	return true, nil
}

// onesPacked reports whether the first n bits of b are all set.
func onesPacked(b []byte, n int) bool {
	full := n / 8
	for _, c := range b[:full] {
		if c != 0xff {
			return false
		}
	}
	if rest := n % 8; rest > 0 {
		mask := byte(1)<<rest - 1
		return b[full]&mask == mask
	}
	return true
}

// gatherIndices writes dict[i] for the n dictionary indices in b (a width
// byte, then runs) into dst; an index past the dictionary is an error.
func gatherIndices(b []byte, dict []float64, dst []float64) error {
	if len(b) < 1 || b[0] > 32 {
		return errors.New("dictionary index width unreadable")
	}
	width := int(b[0])
	b = b[1:]
	for len(dst) > 0 {
		count, packed, h := runHeader(b)
		if h == 0 || count == 0 {
			return errRunsShort
		}
		b = b[h:]
		take := int(min(count, uint64(len(dst))))
		var err error
		if packed {
			b, err = gatherPacked(b, width, int(count/8), dict, dst[:take])
		} else {
			b, err = gatherRepeated(b, width, dict, dst[:take])
		}
		if err != nil {
			return err
		}
		dst = dst[take:]
	}
	return nil
}

// gatherRepeated fills dst with the dictionary value a repeated run names.
func gatherRepeated(b []byte, width int, dict, dst []float64) ([]byte, error) {
	size := (width + 7) / 8
	if len(b) < size {
		return nil, errRunsShort
	}
	var idx uint64
	for i := range size {
		idx |= uint64(b[i]) << (8 * i)
	}
	if idx >= uint64(len(dict)) {
		return nil, errors.New("dictionary index out of range")
	}
	v := dict[idx]
	for i := range dst {
		dst[i] = v
	}
	return b[size:], nil
}

// gatherPacked writes the dictionary values of the first len(dst) indices
// of a bit-packed run of groups groups.
func gatherPacked(b []byte, width, groups int, dict, dst []float64) ([]byte, error) {
	if width > 0 && groups > len(b)/width {
		return nil, errRunsShort
	}
	size := groups * width
	run := b[:size]
	mask := uint64(1)<<width - 1
	for i := range dst {
		bit := i * width
		idx := (load64(run, bit/8) >> (bit % 8)) & mask
		if idx >= uint64(len(dict)) {
			return nil, errors.New("dictionary index out of range")
		}
		dst[i] = dict[idx]
	}
	return b[size:], nil
}

// load64 is the little-endian 64 bits of b from at, zeros past its end
// (a value of up to 32 bits at any bit offset fits in them).
func load64(b []byte, at int) uint64 {
	if at+8 <= len(b) {
		return binary.LittleEndian.Uint64(b[at:])
	}
	var v uint64
	for i := at; i < len(b); i++ {
		v |= uint64(b[i]) << (8 * (i - at))
	}
	return v
}
