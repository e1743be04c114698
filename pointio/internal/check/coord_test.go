package check

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestParsePlainDecimal checks the fast path against strconv.ParseFloat.
func TestParsePlainDecimal(t *testing.T) {
	check := func(s string) {
		t.Helper()
		got, ok := parsePlainDecimal(s)
		want, err := strconv.ParseFloat(s, 64)
		if ok && (err != nil || math.Float64bits(got) != math.Float64bits(want)) {
			t.Fatalf("parsePlainDecimal(%q) = %v; strconv gives %v, %v", s, got, want, err)
		}
	}
	for _, s := range []string{
		"0", "-0", "+0", "0.", ".0", "-.5", "5.", ".", "-", "+", "", "00012.50", "1.2.3", "1e5", "12a",
		"-6.081689834590001", "145.391998291", "89.99999999999999", "179.999999999999999",
		"9007199254740993", "9007199254740992", "0.9007199254740993", "123456789012345678", "1234567890123456789",
		"0.000000000000000001", "-90.000000000000001",
	} {
		check(s)
	}
	r := rand.New(rand.NewPCG(9, 10))
	for range 200_000 {
		// Random digit strings with a decimal point somewhere.
		n := 1 + r.IntN(19)
		b := make([]byte, 0, n+2)
		if r.IntN(2) == 0 {
			b = append(b, '-')
		}
		dot := r.IntN(n + 1)
		for j := range n {
			if j == dot {
				b = append(b, '.')
			}
			b = append(b, byte('0'+r.IntN(10)))
		}
		check(string(b))
		check(strconv.FormatFloat(r.Float64()*360-180, 'f', -1, 64))
		check(strconv.FormatFloat(r.Float64()*180-90, 'f', r.IntN(16), 64))
	}
}

func FuzzParsePlainDecimal(f *testing.F) {
	for _, s := range []string{"0", "-12.5", "145.391998291", ".5", "9007199254740993"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parsePlainDecimal(s)
		if !ok {
			return
		}
		want, err := strconv.ParseFloat(s, 64)
		if err != nil || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("parsePlainDecimal(%q) = %v; strconv gives %v, %v", s, got, want, err)
		}
	})
}

func TestParseCoordMatchesStrconv(t *testing.T) {
	// Valid values must parse exactly as strconv.ParseFloat does.
	for _, s := range []string{"0", "-0", "1", "89.99999999999999", "-90", "180", "1e-400", "0.1", "-33.8688", "145.391998291", ".5", "5."} {
		v, reason := Coord(s, 180)
		want, err := strconv.ParseFloat(s, 64)
		if reason != "" || err != nil || math.Float64bits(v) != math.Float64bits(want) {
			t.Errorf("Coord(%q) = %v, %q; strconv gives %v, %v", s, v, reason, want, err)
		}
	}
	// Digit separators and other syntax strconv rejects in decimals.
	for _, s := range []string{"1_0", "1,5", "--1", "1e", "e1", ".", "0x", "1 2"} {
		if v, reason := Coord(s, 180); reason == "" {
			t.Errorf("Coord(%q) accepted %v", s, v)
		}
	}
}
