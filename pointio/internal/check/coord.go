package check

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// Coord parses a coordinate in decimal degrees and checks that it lies
// in [-limit, limit]. It returns a non-empty reason if the value is invalid.
func Coord(s string, limit float64) (float64, string) {
	if v, ok := parsePlainDecimal(s); ok {
		return v, RangeReason(v, limit)
	}
	if v, err := strconv.ParseFloat(s, 64); err == nil && isDecimal(s) {
		return v, RangeReason(v, limit)
	}
	// Slow path: surrounding white space, or an invalid value.
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, ReasonEmpty
	}
	v, err := strconv.ParseFloat(t, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		// A finite decimal beyond the float64 range: far out of range.
		return 0, OutOfRange(limit)
	case err != nil:
		return 0, ReasonNaN
	case isDecimal(t):
		return v, RangeReason(v, limit)
	case math.IsNaN(v) || math.IsInf(v, 0):
		return 0, ReasonNotFinite
	default:
		// ParseFloat also accepts hexadecimal floats ("0x1p-2") and
		// digit separators ("1_000"); neither belongs in a coordinate.
		return 0, ReasonHex
	}
}

// exactPow10 holds the powers of ten that are exact in a float64.
var exactPow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parsePlainDecimal is a fast path for the usual coordinate syntax: an
// optional sign, digits and an optional decimal point, at most 18 digits in
// all, and no exponent. It reports false for anything else, leaving it to
// strconv.ParseFloat.
//
// The result equals strconv.ParseFloat's: with at most 18 digits the
// significand is an integer below 2^63; when it is also at most 2^53 it
// and the power of ten (at most 1e22) are exact float64 values, and IEEE
// division rounds their quotient correctly (Clinger's fast path).
func parsePlainDecimal(s string) (float64, bool) {
	i := 0
	neg := false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		i = 1
	}
	var mant uint64
	digits, frac := 0, -1 // frac < 0: no decimal point yet
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			mant = mant*10 + uint64(c-'0')
			digits++
			if frac >= 0 {
				frac++
			}
		case c == '.' && frac < 0:
			frac = 0
		default:
			return 0, false
		}
	}
	if digits == 0 || digits > 18 || mant > 1<<53 {
		return 0, false
	}
	v := float64(mant)
	if frac > 0 {
		v /= exactPow10[frac] // frac <= digits <= 18
	}
	if neg {
		v = -v
	}
	return v, true
}

// isDecimal reports whether s holds only the bytes of a decimal number:
// digits, '.', signs and exponent markers.
func isDecimal(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && c != '.' && c != '-' && c != '+' && c != 'e' && c != 'E' {
			return false
		}
	}
	return true
}

// RangeReason reports why v is not a valid coordinate with the given
// limit (90 for latitude, 180 for longitude), or "" if it is valid.
func RangeReason(v, limit float64) string {
	if v >= -limit && v <= limit {
		return ""
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ReasonNotFinite
	}
	return OutOfRange(limit)
}

// OutOfRange is the reason a value beyond limit (90: a latitude, else a
// longitude) is refused.
func OutOfRange(limit float64) string {
	if limit == 90 {
		return ReasonLatRange
	}
	return ReasonLonRange
}
