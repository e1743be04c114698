package fdlibm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Asin agrees with a correctly rounding libm (glibc's, values below) and
// with an atan2 form within two ulp.
func TestAsin(t *testing.T) {
	for _, tc := range [][2]float64{
		{0.9991471730082631, 1.5294938271540317}, {0.3, 0.3046926540153975}, {-0.7, -0.775397496610753},
		{0.97, 1.3252308092796046}, {0.98, 1.3704614844717768}, {0.5, 0.5235987755982989},
		{0.999999, 1.5693821131146521},
	} {
		if got := Asin(tc[0]); got != tc[1] {
			t.Errorf("Asin(%v) = %v, glibc %v", tc[0], got, tc[1])
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	xs := []float64{-1, 1, 0, 0.5, -0.5, 0.975, -0.975, 0x1p-27, 1 - 0x1p-53}
	for range 200000 {
		xs = append(xs, 2*rng.Float64()-1)
	}
	for _, x := range xs {
		// atan2 of the exact-ish cosine stays accurate near 1, where
		// math.Asin loses a few ulp.
		got, want := Asin(x), math.Atan2(x, math.Sqrt((1-x)*(1+x)))
		if ulp := math.Abs(math.Nextafter(want, 2) - want); math.Abs(got-want) > 2*ulp {
			t.Fatalf("Asin(%v) = %v, atan2 form %v (%.1f ulp)", x, got, want, math.Abs(got-want)/ulp)
		}
	}
	if !math.IsNaN(Asin(1.5)) {
		t.Error("Asin(1.5) is not NaN")
	}
}
