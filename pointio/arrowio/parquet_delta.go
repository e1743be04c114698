package arrowio

import (
	"encoding/binary"
	"math/bits"
)

// DELTA_BINARY_PACKED as arrow-go writes it: blocks of 128 deltas in four
// miniblocks of 32, each miniblock packed at the bit width of its
// largest delta above the block's least, the last miniblock padded with
// zeros and unused miniblocks' widths zero. The deltas are taken at the
// column's physical width (an INT32 column's wrap in 32 bits, as the
// spec asks).
const (
	deltaBlockValues = 128
	deltaMiniBlocks  = 4
	deltaMiniValues  = deltaBlockValues / deltaMiniBlocks
	// deltaHeaderRoom is more than a page's delta header: four varints.
	deltaHeaderRoom = 4 * binary.MaxVarintLen64
)

// deltaValue is an integer column's physical type.
type deltaValue interface{ int32 | int64 }

// appendDeltaPage appends deltaHeaderRoom bytes of room, then the blocks
// of the DELTA_BINARY_PACKED page that begins with vals[0], and writes
// the page's delta header at the end of the room: the page's encoding is
// b[at:]. It returns b, at and the page's values. The page ends as
// arrow-go's column writer ends it: values are added a batch at a time,
// and the page ends after the first batch at whose end the blocks already
// complete hold pageSize bytes or more. A page begins at a batch's start,
// and batch is a multiple of a block. r is the page's least and greatest
// value, ordered as S (the column's sort order: an INT32 column of
// unsigned values orders them as uint32).
func appendDeltaPage[T deltaValue, S statValue](b []byte, vals []T, pageSize, batch int) (_ []byte, at, end int, r valueRange[S]) {
	b = grow(b, len(b)+deltaHeaderRoom)
	blocks := len(b)
	end = len(vals)
	perBatch := batch / deltaBlockValues
	var deltas [deltaBlockValues]int64
	r = valueRange[S]{S(vals[0]), S(vals[0])}
	for nb := 0; 1+(nb+1)*deltaBlockValues <= end; nb++ {
		lo := 1 + nb*deltaBlockValues
		b = appendDeltaBlock(b, vals[lo-1:lo+deltaBlockValues], &deltas, &r)
		// At the end of batch k, its 1024 k values hold 1024 k - 1
		// deltas, of which 8 k - 1 blocks are complete: nb + 1 of them.
		if (nb+2)%perBatch == 0 && len(b)-blocks >= pageSize {
			end = min(end, (nb+2)/perBatch*batch)
		}
	}
	// Fewer than a block of deltas remain.
	if lo := 1 + (end-1)/deltaBlockValues*deltaBlockValues; lo < end {
		b = appendDeltaBlock(b, vals[lo-1:end], &deltas, &r)
	}
	var h [deltaHeaderRoom]byte
	hdr := binary.AppendUvarint(h[:0], deltaBlockValues)
	hdr = binary.AppendUvarint(hdr, deltaMiniBlocks)
	hdr = binary.AppendUvarint(hdr, uint64(end))
	hdr = binary.AppendVarint(hdr, int64(vals[0]))
	at = blocks - len(hdr)
	copy(b[at:], hdr)
	return b, at, end, r
}

// statValue is a column's values as their sort order orders them.
type statValue interface{ int32 | uint32 | int64 }

// valueRange is the least and greatest of some values.
type valueRange[S statValue] struct{ lo, hi S }

// appendDeltaBlock appends the block of the deltas between consecutive
// vals (2 to 129 values), and takes vals after the first into r: the
// values are read once, for both.
func appendDeltaBlock[T deltaValue, S statValue](b []byte, vals []T, deltas *[deltaBlockValues]int64, r *valueRange[S]) []byte {
	n := len(vals) - 1
	minis := (n + deltaMiniValues - 1) / deltaMiniValues
	var hi [deltaMiniBlocks]int64
	minDelta := int64(vals[1] - vals[0])
	vlo, vhi := r.lo, r.hi
	for m := range minis {
		lo, end := m*deltaMiniValues, min(n, (m+1)*deltaMiniValues)
		top, least := int64(vals[lo+1]-vals[lo]), minDelta
		for i := lo; i < end; i++ {
			d := int64(vals[i+1] - vals[i])
			deltas[i] = d
			least, top = min(least, d), max(top, d)
			vlo, vhi = min(vlo, S(vals[i+1])), max(vhi, S(vals[i+1]))
		}
		minDelta, hi[m] = least, top
	}
	r.lo, r.hi = vlo, vhi
	// The last miniblock's padding: deltas of minDelta pack as zeros.
	for i := n; i < minis*deltaMiniValues; i++ {
		deltas[i] = minDelta
	}
	b = binary.AppendVarint(b, minDelta)
	widths := len(b)
	b = append(b, 0, 0, 0, 0)
	for m := range minis {
		w := uint(bits.Len64(uint64(hi[m] - minDelta)))
		b[widths+m] = byte(w)
		b = appendPacked(b, (*[deltaMiniValues]int64)(deltas[m*deltaMiniValues:]), minDelta, w)
	}
	return b
}

// appendPacked appends a miniblock: the 32 values d - base at w bits
// each, least significant bit first.
func appendPacked(b []byte, d *[deltaMiniValues]int64, base int64, w uint) []byte {
	if w == 0 {
		return b
	}
	at := len(b)
	b = grow(b, at+deltaMiniValues*int(w)/8) // every byte written below
	out := b[at:]
	var acc uint64
	var used uint // bits of acc taken, below 64 (the masks spare Go's shift checks)
	pos := 0
	for _, x := range d {
		v := uint64(x - base)
		acc |= v << (used & 63)
		used += w
		if used >= 64 {
			binary.LittleEndian.PutUint64(out[pos:], acc)
			pos += 8
			used -= 64
			// v's bits not yet written: w - used of them were, 1 to w.
			acc = v >> 1 >> ((w - used - 1) & 63)
		}
	}
	if used > 0 { // 32 w bits: what is left is 32 bits
		binary.LittleEndian.PutUint32(out[pos:], uint32(acc))
	}
	return b
}
