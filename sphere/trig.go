package sphere

import "math"

// The trigonometry of the motion model (Propagate) and of the unit vectors
// made from moved positions. sincos and atan2 are the Go standard library's
// algorithms (math.Sincos, math.Atan2: Cephes polynomials) written so that
// every operation rounds on its own: the explicit float64 conversions forbid
// fused multiply-adds, which Go may use on some architectures. A CUDA kernel
// doing the same operations (internal/kernels/gotrig.cuh) gets the same
// bits, and on amd64 they equal math.Sincos and math.Atan2 bit for bit.

// MaxTrigArg bounds the arguments of sincos: beyond it math.Sincos switches
// to Payne-Hanek reduction, which the GPU twin does not carry. Positions and
// headings are within 2π; a step's central angle beyond it is refused.
const MaxTrigArg = 1 << 29

var sinCoef = [...]float64{
	1.58962301576546568060e-10, -2.50507477628578072866e-8, 2.75573136213857245213e-6,
	-1.98412698295895385996e-4, 8.33333333332211858878e-3, -1.66666666666666307295e-1,
}

var cosCoef = [...]float64{
	-1.13585365213876817300e-11, 2.08757008419747316778e-9, -2.75573141792967388112e-7,
	2.48015872888517045348e-5, -1.38888888888730564116e-3, 4.16666666666665929218e-2,
}

// Sincos is math.Sincos for finite |x| < MaxTrigArg (NaN beyond), the same
// bits on every architecture and GOAMD64 level (math.Sincos's own may fuse
// multiply-adds where the compiler does) and on the GPU (go_sincos): the
// unit vectors of both engines are made with it.
func Sincos(x float64) (sin, cos float64) { return sincos(x) }

// sincos is math.Sincos for finite |x| < MaxTrigArg (NaN beyond).
func sincos(x float64) (sin, cos float64) {
	const (
		pi4A = 7.85398125648498535156e-1
		pi4B = 3.77489470793079817668e-8
		pi4C = 2.69515142907905952645e-15
	)
	if x == 0 {
		return x, 1
	}
	if !(math.Abs(x) < MaxTrigArg) {
		return math.NaN(), math.NaN()
	}
	sinSign, cosSign := false, false
	if x < 0 {
		x, sinSign = -x, true
	}
	j := uint64(float64(x * (4 / math.Pi)))
	y := float64(j)
	if j&1 == 1 {
		j++
		y++
	}
	j &= 7
	z := float64(float64(float64(x-float64(y*pi4A))-float64(y*pi4B)) - float64(y*pi4C))
	if j > 3 {
		j -= 4
		sinSign, cosSign = !sinSign, !cosSign
	}
	if j > 1 {
		cosSign = !cosSign
	}
	zz := float64(z * z)
	cos = float64(float64(1.0-float64(0.5*zz)) + float64(float64(zz*zz)*poly(cosCoef, zz)))
	sin = float64(z + float64(float64(z*zz)*poly(sinCoef, zz)))
	if j == 1 || j == 2 {
		sin, cos = cos, sin
	}
	if cosSign {
		cos = -cos
	}
	if sinSign {
		sin = -sin
	}
	return sin, cos
}

// poly is ((((c0 z + c1) z + c2) z + c3) z + c4) z + c5, each step rounded.
func poly(c [6]float64, z float64) float64 {
	p := float64(c[0] * z)
	for _, ck := range c[1:5] {
		p = float64(float64(p+ck) * z)
	}
	return float64(p + c[5])
}

// xatan is math's xatan: atan(x) for 0 <= x <= 0.66.
func xatan(x float64) float64 {
	const (
		p0, p1, p2 = -8.750608600031904122785e-01, -1.615753718733365076637e+01, -7.500855792314704667340e+01
		p3, p4     = -1.228866684490136173410e+02, -6.485021904942025371773e+01
		q0, q1, q2 = +2.485846490142306297962e+01, +1.650270098316988542046e+02, +4.328810604912902668951e+02
		q3, q4     = +4.853903996359136964868e+02, +1.945506571482613964425e+02
	)
	z := float64(x * x)
	num := float64(float64(float64(float64(float64(float64(float64(float64(p0*z)+p1)*z)+p2)*z)+p3)*z) + p4)
	den := float64(float64(float64(float64(float64(float64(float64(float64(float64(z+q0)*z)+q1)*z)+q2)*z)+q3)*z) + q4)
	z = float64(float64(z*num) / den)
	return float64(float64(x*z) + x)
}

// satan is math's satan: atan(x) for x >= 0, reduced to xatan's range.
func satan(x float64) float64 {
	const (
		morebits = 6.123233995736765886130e-17
		tan3pio8 = 2.41421356237309504880
	)
	if x <= 0.66 {
		return xatan(x)
	}
	if x > tan3pio8 {
		return float64(float64(math.Pi/2-xatan(float64(1/x))) + morebits)
	}
	return float64(float64(math.Pi/4+xatan(float64(float64(x-1)/float64(x+1)))) + float64(0.5*morebits))
}

// atan2 is math.Atan2 for finite arguments.
func atan2(y, x float64) float64 {
	switch {
	case math.IsNaN(y) || math.IsNaN(x):
		return math.NaN()
	case y == 0:
		if x >= 0 && !math.Signbit(x) {
			return math.Copysign(0, y)
		}
		return math.Copysign(math.Pi, y)
	case x == 0:
		return math.Copysign(math.Pi/2, y)
	}
	q := float64(y / x)
	if q == 0 {
		// atan(±0) is ±0.
	} else if q > 0 {
		q = satan(q)
	} else {
		q = -satan(-q)
	}
	if x < 0 {
		if q <= 0 {
			return float64(q + math.Pi)
		}
		return float64(q - math.Pi)
	}
	return q
}
