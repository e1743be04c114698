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

// Populate never writes the memory: values written before it and beside
// it stay as written.
func TestPopulateKeepsWhatIsWritten(t *testing.T) {
	for _, n := range []int{0, 1, 1000, 3 << 20} {
		s := make([]uint32, n)
		for i := range s {
			s[i] = uint32(i) | 1
		}
		wait := Populate(s)
		for i := len(s) / 2; i < len(s); i++ {
			s[i] = uint32(i) * 3
		}
		wait()
		for i, v := range s {
			want := uint32(i) | 1
			if i >= len(s)/2 {
				want = uint32(i) * 3
			}
			if v != want {
				t.Fatalf("Populate(%d): [%d] = %d, want %d", n, i, v, want)
			}
		}
	}
}
