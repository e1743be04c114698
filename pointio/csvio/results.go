package csvio

import (
	"bufio"
	"fmt"
	"math"
	"strconv"

	"github.com/geoknn/geoknn/pointio"
)

// ResultsHeader is the header line WriteResults writes, without the
// trailing newline.
const ResultsHeader = "obs_index,ref_index,distance_m"

// WriteResults writes the nearest-neighbour results for n observations as
// CSV to w and flushes it. The output is the header line ResultsHeader
// followed by one line per observation in input order: the 0-based
// observation index, the 0-based index of its nearest reference point, and
// the great-circle distance between them in metres with three decimals
// (millimetres), rounded to nearest as strconv.FormatFloat(m, 'f', 3, 64)
// does. Lines end in "\n". For example:
//
//	obs_index,ref_index,distance_m
//	0,17,1523.250
//	1,3,0.000
//
// row(i) returns the result for observation i; it is called once per
// observation, from several goroutines at once for large n (rows are
// formatted in parallel blocks and written in order), so it must be safe for
// concurrent use, as reading from result slices is. A distance that is
// negative, NaN or infinite is an error, as is any error writing to w.
func WriteResults(w *bufio.Writer, n int, row func(i int) (ref uint32, metres float64)) error {
	if n < 0 {
		return fmt.Errorf("write results: negative row count %d", n)
	}
	if _, err := w.WriteString(ResultsHeader + "\n"); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	// Formatting costs about 50 ns a row, seconds for 2^27 rows, so blocks
	// of rows are formatted on every core, ahead of the writes.
	err := pointio.WriteBlocks(w, n, 1<<16, func(dst []byte, lo, hi int) ([]byte, error) { return appendRows(dst, lo, hi, row) })
	if err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}

// appendRows appends the CSV lines of observations [lo, hi) to dst.
func appendRows(dst []byte, lo, hi int, row func(i int) (ref uint32, metres float64)) ([]byte, error) {
	var line [rowBufferSize]byte
	for i := lo; i < hi; i++ {
		ref, m := row(i)
		if !(m >= 0) || math.IsInf(m, 1) {
			return dst, fmt.Errorf("write results: observation %d: invalid distance %v m", i, m)
		}
		mm, ok := millimetres(m)
		if !ok {
			dst = appendRowFloat(dst, i, ref, m)
			continue
		}
		// The usual row is formatted right to left into line, here rather
		// than in a function of its own: a call per row costs 2-3%.
		end := len(line) - 5
		frac := mm % 1000
		line[end] = '.'
		line[end+1] = byte('0' + frac/100)
		line[end+2] = byte('0' + frac/10%10)
		line[end+3] = byte('0' + frac%10)
		line[end+4] = '\n'
		end = putUint(&line, end, mm/1000)
		end--
		line[end] = ','
		end = putUint(&line, end, uint64(ref))
		end--
		line[end] = ','
		end = putUint(&line, end, uint64(i))
		dst = append(dst, line[end:]...)
	}
	return dst, nil
}

// rowBufferSize is large enough for any row appendRows formats in line: an
// index of up to 19 digits, a reference of up to 10 and a distance below
// 1e12 m (13 digits with the point, 3 decimals), 3 separators.
const rowBufferSize = 64

// appendRowFloat appends the CSV line of observation i, whose nearest
// reference ref is m metres away, to dst, for the distances millimetres
// cannot round.
func appendRowFloat(dst []byte, i int, ref uint32, m float64) []byte {
	dst = strconv.AppendInt(dst, int64(i), 10)
	dst = append(dst, ',')
	dst = strconv.AppendUint(dst, uint64(ref), 10)
	dst = append(dst, ',')
	dst = appendMetres(dst, m)
	return append(dst, '\n')
}

// appendMetres appends m >= 0 with exactly three decimals, giving the same
// bytes as strconv.AppendFloat(dst, m, 'f', 3, 64) (except that negative
// zero is written as "0.000") but several times faster in the common case.
func appendMetres(dst []byte, m float64) []byte {
	if mm, ok := millimetres(m); ok {
		dst = strconv.AppendUint(dst, mm/1000, 10)
		frac := mm % 1000
		return append(dst, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
	}
	return strconv.AppendFloat(dst, m, 'f', 3, 64)
}

// millimetres returns m >= 0 rounded to the nearest multiple of 0.001 (ties
// to even, as strconv rounds the exact binary value), in units of 0.001. It
// returns false where it cannot prove the result correct cheaply: values of
// 1e12 and more, and values within rounding error of a tie.
//
// It rounds m*1000 to an integer mm, and uses a fused multiply-add to
// compute the residual m*1000 - mm with a single rounding. Rounding is
// monotonic and ±0.5 is representable, so a computed residual strictly
// inside (-0.5, 0.5) proves that the exact residual is too, that is, mm is
// the correctly rounded result.
func millimetres(m float64) (uint64, bool) {
	if !(m < 1e12) {
		return 0, false
	}
	mmf := math.Round(m * 1000)
	if r := math.FMA(m, 1000, -mmf); r > -0.5 && r < 0.5 {
		return uint64(mmf), true
	}
	return 0, false
}

// digitPairs holds the two-digit decimal strings "00" to "99".
const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// putUint writes the decimal digits of v into b, ending just before b[end],
// and returns the index of the first digit. b must have room for them.
func putUint(b *[rowBufferSize]byte, end int, v uint64) int {
	for v >= 100 {
		q := v / 100
		r := (v - q*100) * 2
		end -= 2
		b[end] = digitPairs[r]
		b[end+1] = digitPairs[r+1]
		v = q
	}
	if v >= 10 {
		end -= 2
		b[end] = digitPairs[v*2]
		b[end+1] = digitPairs[v*2+1]
		return end
	}
	end--
	b[end] = byte('0' + v)
	return end
}
