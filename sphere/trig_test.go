package sphere

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// On amd64 (no fused multiply-adds in Go) the twins are math.Sincos and
// math.Atan2 to the bit; elsewhere they still agree within an ulp or two.
func TestTrigTwinsMatchMath(t *testing.T) {
	exact := runtime.GOARCH == "amd64"
	rng := rand.New(rand.NewPCG(1, 2))
	args := []float64{0, math.Copysign(0, -1), math.Pi / 2, -math.Pi / 2, math.Pi, -math.Pi, 1e-300, 3e-9,
		math.Pi / 4, 3 * math.Pi / 4, 1e6, -12345.678, MaxTrigArg - 1}
	for range 200000 {
		args = append(args, (rng.Float64()-0.5)*4*math.Pi, (rng.Float64()-0.5)*1e-6, math.Ldexp(rng.Float64(), rng.IntN(60)-30))
	}
	for _, x := range args {
		s, c := sincos(x)
		ws, wc := math.Sincos(x)
		if !close(s, ws, exact) || !close(c, wc, exact) {
			t.Fatalf("sincos(%v) = %v, %v; math: %v, %v", x, s, c, ws, wc)
		}
	}
	for k := 0; k+1 < len(args); k++ {
		y, x := args[k], args[k+1]
		if got, want := atan2(y, x), math.Atan2(y, x); !close(got, want, exact) {
			t.Fatalf("atan2(%v, %v) = %v; math: %v", y, x, got, want)
		}
	}
	if s, c := sincos(MaxTrigArg); !math.IsNaN(s) || !math.IsNaN(c) {
		t.Errorf("sincos beyond MaxTrigArg = %v, %v; want NaN", s, c)
	}
}

func close(a, b float64, exact bool) bool {
	if exact {
		return math.Float64bits(a) == math.Float64bits(b)
	}
	return a == b || math.Abs(a-b) <= 4e-16*math.Max(math.Abs(a), math.Abs(b))
}
