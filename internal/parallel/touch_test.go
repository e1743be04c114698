package parallel

import (
	"runtime"
	"testing"
)

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

func TestGrown(t *testing.T) {
	s := Grown[float64](nil, 3, 10)
	if len(s) != 3 || cap(s) < 10 {
		t.Fatalf("len %d cap %d, want 3 and at least 10", len(s), cap(s))
	}
	s[0] = 7
	if r := Grown(s, 8, 10); &r[0] != &s[0] || len(r) != 8 {
		t.Fatal("a slice with room was made anew")
	}
	if r := Grown(s, 12, 4); len(r) != 12 || cap(r) < 12 || r[0] != 0 {
		t.Fatal("a short slice was not made anew, zeroed")
	}
}

var freshSink []uint32

// BenchmarkFreshColumn makes a 512 MiB answer column the way a query
// whose previous result the collector freed does: Touched (the runtime
// clears the recycled memory on one goroutine, then every page is
// written on every core) against Written (Uncleared backed by
// Populate), for answers the query writes whole.
func BenchmarkFreshColumn(b *testing.B) {
	for _, way := range []struct {
		name string
		make func(n int) []uint32
	}{
		{"touched", Touched[uint32]},
		{"written", Written[uint32]},
	} {
		b.Run(way.name, func(b *testing.B) {
			b.SetBytes(4 << 27)
			for range b.N {
				b.StopTimer()
				freshSink = nil
				runtime.GC()
				b.StartTimer()
				freshSink = way.make(1 << 27)
			}
		})
	}
}

// Written gives room for n values of each kind it takes, writable.
func TestWrittenSized(t *testing.T) {
	for _, n := range []int{0, 1, 3, 1000, 3 << 20} {
		u, f := Written[uint64](n), Written[float64](n)
		if len(u) != n || len(f) != n {
			t.Fatalf("Written(%d): len %d and %d", n, len(u), len(f))
		}
		for i := range u {
			u[i], f[i] = uint64(i), float64(i)
		}
		if n > 0 && (u[n-1] != uint64(n-1) || f[n-1] != float64(n-1)) {
			t.Fatalf("Written(%d): last value not kept", n)
		}
	}
}
