// generate.cu: synthetic observations made on the GPU, where they are used,
// instead of generated on the host and copied in.
//
// Point i of a set drawn with seed is a pure function of (i, seed): two
// uniforms from Philox4x32-10 (the Random123 reference), then the point.
// sphere/indexed.go (SphereAt, SeedUniformAt) is the Go twin: every
// floating-point operation here rounds on its own (the _rn intrinsics, which
// nvcc never fuses into FMAs), as there, so the two agree bit for bit and the
// CPU engine answers the same points.
//
// Kernels (extern "C"):
//   gen_sphere  z = sin(lat) = 2u-1, lon = (2v-1)pi: uniform on the sphere
//   gen_seed    lat = (u-1/2)pi, lon = (2v-1)pi: uniform in degrees (the
//               reference notebook's generator)
// Both write points [first, first+n) of the set to lat[0..n), lon[0..n).

#include <stdint.h>

#define GEN_THREADS 256

#define STREAM_SPHERE 0x3c6ef372fe94f82bull
#define STREAM_SEED 0xa54ff53a5f1d36f1ull
#define PI 3.141592653589793

__device__ __forceinline__ uint4 philox4x32(uint4 c, uint2 k) {
    const uint32_t m0 = 0xD2511F53u, m1 = 0xCD9E8D57u, w0 = 0x9E3779B9u, w1 = 0xBB67AE85u;
#pragma unroll
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k.x += w0;
            k.y += w1;
        }
        const uint32_t hi0 = __umulhi(m0, c.x), lo0 = m0 * c.x;
        const uint32_t hi1 = __umulhi(m1, c.z), lo1 = m1 * c.z;
        c = make_uint4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
    }
    return c;
}

// uniforms: two doubles in [0, 1), 53 random bits each, of point i.
__device__ __forceinline__ void uniforms(uint64_t i, uint64_t seed, uint64_t stream, double* u, double* v) {
    const uint64_t k = seed ^ stream;
    const uint4 r = philox4x32(make_uint4((uint32_t)i, (uint32_t)(i >> 32), 0, 0),
                               make_uint2((uint32_t)k, (uint32_t)(k >> 32)));
    const uint64_t a = (uint64_t)r.x << 32 | r.y, b = (uint64_t)r.z << 32 | r.w;
    *u = __dmul_rn((double)(a >> 11), 0x1p-53);
    *v = __dmul_rn((double)(b >> 11), 0x1p-53);
}

// asin_ratio: fdlibm's p(t)/q(t), term by term as sphere/asin.go.
__device__ __forceinline__ double asin_ratio(double t) {
    double p = __dmul_rn(t, __dadd_rn(7.91534994289814532176e-04, __dmul_rn(t, 3.47933107596021167570e-05)));
    p = __dmul_rn(t, __dadd_rn(-4.00555345006794114027e-02, p));
    p = __dmul_rn(t, __dadd_rn(2.01212532134862925881e-01, p));
    p = __dmul_rn(t, __dadd_rn(-3.25565818622400915405e-01, p));
    p = __dmul_rn(t, __dadd_rn(1.66666666666666657415e-01, p));
    double q = __dmul_rn(t, __dadd_rn(-6.88283971605453293030e-01, __dmul_rn(t, 7.70381505559019352791e-02)));
    q = __dmul_rn(t, __dadd_rn(2.02094576023350569471e+00, q));
    q = __dmul_rn(t, __dadd_rn(-2.40339491173441421878e+00, q));
    q = __dadd_rn(1.0, q);
    return __ddiv_rn(p, q);
}

// asin_fdlibm: fdlibm's __ieee754_asin for |x| <= 1, as sphere/asin.go.
__device__ double asin_fdlibm(double x) {
    const double pio2_hi = 1.57079632679489655800e+00, pio2_lo = 6.12323399573676603587e-17,
                 pio4_hi = 7.85398163397448278999e-01;
    const double ax = fabs(x);
    if (ax >= 1.0) return __dadd_rn(__dmul_rn(x, pio2_hi), __dmul_rn(x, pio2_lo));
    if (ax < 0.5) {
        if (ax < 0x1p-26) return x;
        const double t = __dmul_rn(x, x);
        return __dadd_rn(x, __dmul_rn(x, asin_ratio(t)));
    }
    const double t = __dmul_rn(__dadd_rn(1.0, -ax), 0.5);
    const double r = asin_ratio(t);
    const double s = __dsqrt_rn(t);
    double y;
    if (ax >= 0.975) {
        y = __dadd_rn(pio2_hi, -__dadd_rn(__dmul_rn(2.0, __dadd_rn(s, __dmul_rn(s, r))), -pio2_lo));
    } else {
        const double w = __longlong_as_double(__double_as_longlong(s) & 0xffffffff00000000ll);
        const double c = __ddiv_rn(__dadd_rn(t, -__dmul_rn(w, w)), __dadd_rn(s, w));
        const double p = __dadd_rn(__dmul_rn(__dmul_rn(2.0, s), r), -__dadd_rn(pio2_lo, -__dmul_rn(2.0, c)));
        const double q = __dadd_rn(pio4_hi, -__dmul_rn(2.0, w));
        y = __dadd_rn(pio4_hi, -__dadd_rn(p, -q));
    }
    return x < 0 ? -y : y;
}

extern "C" __global__ void __launch_bounds__(GEN_THREADS)
    gen_sphere(uint64_t first, int n, uint64_t seed, double* __restrict__ lat, double* __restrict__ lon) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    double u, v;
    uniforms(first + j, seed, STREAM_SPHERE, &u, &v);
    lat[j] = asin_fdlibm(__dadd_rn(__dmul_rn(2.0, u), -1.0));
    lon[j] = __dmul_rn(__dadd_rn(__dmul_rn(2.0, v), -1.0), PI);
}

extern "C" __global__ void __launch_bounds__(GEN_THREADS)
    gen_seed(uint64_t first, int n, uint64_t seed, double* __restrict__ lat, double* __restrict__ lon) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    double u, v;
    uniforms(first + j, seed, STREAM_SEED, &u, &v);
    lat[j] = __dmul_rn(__dadd_rn(u, -0.5), PI);
    lon[j] = __dmul_rn(__dadd_rn(__dmul_rn(2.0, v), -1.0), PI);
}
