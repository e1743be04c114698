// Package fdlibm holds the fdlibm functions geoknn needs bit for bit on the
// CPU and in its CUDA twins: each operation rounds on its own (the explicit
// float64 conversions forbid fused multiply-adds), so a kernel doing the
// same operations gets the same bits, which the math package does not
// promise. Asin is also cheaper than math.Asin, which takes an arctangent
// of a quotient.
package fdlibm

import "math"

// Asin is fdlibm's __ieee754_asin (error below one ulp), its branches cut
// at 0.5 and 0.975 by value rather than by fdlibm's high-word tests (the
// twin in twin.cuh cuts at the same values and computes the same bits).
func Asin(x float64) float64 {
	const (
		pio2Hi = 1.57079632679489655800e+00
		pio2Lo = 6.12323399573676603587e-17
		pio4Hi = 7.85398163397448278999e-01
	)
	ax := math.Abs(x)
	switch {
	case ax >= 1:
		if ax == 1 {
			return float64(float64(x*pio2Hi) + float64(x*pio2Lo))
		}
		return math.NaN()
	case ax < 0.5:
		if ax < 0x1p-26 {
			return x
		}
		t := float64(x * x)
		return float64(x + float64(x*asinRatio(t)))
	}
	t := float64(float64(1-ax) * 0.5)
	r := asinRatio(t)
	s := math.Sqrt(t)
	var y float64
	if ax >= 0.975 {
		y = float64(pio2Hi - float64(float64(2*float64(s+float64(s*r)))-pio2Lo))
	} else {
		w := math.Float64frombits(math.Float64bits(s) &^ 0xffffffff) // s with its low word cleared
		c := float64(float64(t-float64(w*w)) / float64(s+w))
		p := float64(float64(float64(2*s)*r) - float64(pio2Lo-float64(2*c)))
		q := float64(pio4Hi - float64(2*w))
		y = float64(pio4Hi - float64(p-q))
	}
	if x < 0 {
		return -y
	}
	return y
}

// asinRatio is fdlibm's rational approximation p(t)/q(t) of
// (asin(sqrt t) - sqrt t) / sqrt t, evaluated term by term.
func asinRatio(t float64) float64 {
	const (
		pS0 = 1.66666666666666657415e-01
		pS1 = -3.25565818622400915405e-01
		pS2 = 2.01212532134862925881e-01
		pS3 = -4.00555345006794114027e-02
		pS4 = 7.91534994289814532176e-04
		pS5 = 3.47933107596021167570e-05
		qS1 = -2.40339491173441421878e+00
		qS2 = 2.02094576023350569471e+00
		qS3 = -6.88283971605453293030e-01
		qS4 = 7.70381505559019352791e-02
	)
	p := float64(t * float64(pS4+float64(t*pS5)))
	p = float64(t * float64(pS3+p))
	p = float64(t * float64(pS2+p))
	p = float64(t * float64(pS1+p))
	p = float64(t * float64(pS0+p))
	q := float64(t * float64(qS3+float64(t*qS4)))
	q = float64(t * float64(qS2+q))
	q = float64(t * float64(qS1+q))
	q = float64(1 + q)
	return float64(p / q)
}
