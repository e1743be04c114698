package count

import "testing"

func TestParse(t *testing.T) {
	for in, want := range map[string]int{
		"2^27": 1 << 27, "134217728": 1 << 27, "1e6": 1000000, "1_000": 1000, " 2^0 ": 1, "0": 0, "2^40": 1 << 40,
	} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "x", "2^", "^3", "2^-1", "-5", "1.5", "2^41", "1e13", "0^3"} {
		if _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q): no error", in)
		}
	}
}
