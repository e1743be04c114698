package parallel

import "testing"

func TestTouchedIsZeroedAndSized(t *testing.T) {
	for _, n := range []int{0, 1, 1000, 3 << 20} {
		s := Touched[uint32](n)
		if len(s) != n {
			t.Fatalf("Touched(%d): len %d", n, len(s))
		}
		for i, v := range s {
			if v != 0 {
				t.Fatalf("Touched(%d)[%d] = %d, want 0", n, i, v)
			}
		}
	}
}
