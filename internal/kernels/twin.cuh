// twin.cuh: device twins of the Go functions whose bits the GPU must
// reproduce, so that the GPU and CPU engines see the same points and report
// the same distances (sphere.cuh's unit vectors and angles): Philox4x32-10
// and the indexed generators (sphere/philox.go, sphere/indexed.go, internal/fdlibm/asin.go),
// the standard library's sincos and atan2 (sphere/trig.go) and the motion
// model (sphere/motion.go). Every operation rounds on its own (the _rn
// intrinsics, which nvcc never fuses into FMAs), as the Go code's explicit
// float64 conversions do there.
#pragma once
#include <stdint.h>

#define STREAM_SPHERE 0x3c6ef372fe94f82bull
#define STREAM_SEED 0xa54ff53a5f1d36f1ull
#define PI 3.141592653589793
#define EARTH_RADIUS_M 6371008.8

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

// asin_ratio: fdlibm's p(t)/q(t), term by term as internal/fdlibm/asin.go.
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

// asin_fdlibm: fdlibm's __ieee754_asin for |x| <= 1, as internal/fdlibm/asin.go.
__device__ __forceinline__ double asin_fdlibm(double x) {
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


// sphere_at, seed_at: point i of the indexed generators (SphereAt,
// SeedUniformAt).
__device__ __forceinline__ void sphere_at(uint64_t i, uint64_t seed, double* lat, double* lon) {
    double u, v;
    uniforms(i, seed, STREAM_SPHERE, &u, &v);
    *lat = asin_fdlibm(__dadd_rn(__dmul_rn(2.0, u), -1.0));
    *lon = __dmul_rn(__dadd_rn(__dmul_rn(2.0, v), -1.0), PI);
}

__device__ __forceinline__ void seed_at(uint64_t i, uint64_t seed, double* lat, double* lon) {
    double u, v;
    uniforms(i, seed, STREAM_SEED, &u, &v);
    *lat = __dmul_rn(__dadd_rn(u, -0.5), PI);
    *lon = __dmul_rn(__dadd_rn(__dmul_rn(2.0, v), -1.0), PI);
}

// go_poly: ((((c0 z + c1) z + c2) z + c3) z + c4) z + c5, rounded per step.
__device__ __forceinline__ double go_poly(const double c[6], double z) {
    double p = __dmul_rn(c[0], z);
#pragma unroll
    for (int k = 1; k < 5; k++) p = __dmul_rn(__dadd_rn(p, c[k]), z);
    return __dadd_rn(p, c[5]);
}

// go_sincos: math.Sincos for finite |x| < 2^29 (sphere/trig.go sincos).
__device__ void go_sincos(double x, double* s, double* c) {
    const double sin_c[6] = {1.58962301576546568060e-10, -2.50507477628578072866e-8, 2.75573136213857245213e-6,
                             -1.98412698295895385996e-4, 8.33333333332211858878e-3, -1.66666666666666307295e-1};
    const double cos_c[6] = {-1.13585365213876817300e-11, 2.08757008419747316778e-9, -2.75573141792967388112e-7,
                             2.48015872888517045348e-5, -1.38888888888730564116e-3, 4.16666666666665929218e-2};
    const double pi4a = 7.85398125648498535156e-1, pi4b = 3.77489470793079817668e-8,
                 pi4c = 2.69515142907905952645e-15;
    if (x == 0) {
        *s = x;
        *c = 1;
        return;
    }
    if (!(fabs(x) < 0x1p29)) {
        *s = *c = __longlong_as_double(0x7ff8000000000001ll);
        return;
    }
    bool sin_sign = false, cos_sign = false;
    if (x < 0) {
        x = -x;
        sin_sign = true;
    }
    uint64_t j = (uint64_t)__dmul_rn(x, 0x1.45f306dc9c883p+0);  // 4/pi
    double y = (double)j;
    if (j & 1) {
        j++;
        y = __dadd_rn(y, 1.0);
    }
    j &= 7;
    const double z = __dadd_rn(__dadd_rn(__dadd_rn(x, -__dmul_rn(y, pi4a)), -__dmul_rn(y, pi4b)), -__dmul_rn(y, pi4c));
    if (j > 3) {
        j -= 4;
        sin_sign = !sin_sign;
        cos_sign = !cos_sign;
    }
    if (j > 1) cos_sign = !cos_sign;
    const double zz = __dmul_rn(z, z);
    double co = __dadd_rn(__dadd_rn(1.0, -__dmul_rn(0.5, zz)), __dmul_rn(__dmul_rn(zz, zz), go_poly(cos_c, zz)));
    double si = __dadd_rn(z, __dmul_rn(__dmul_rn(z, zz), go_poly(sin_c, zz)));
    if (j == 1 || j == 2) {
        const double t = si;
        si = co;
        co = t;
    }
    *c = cos_sign ? -co : co;
    *s = sin_sign ? -si : si;
}

// go_xatan, go_satan: math's atan kernels.
__device__ __forceinline__ double go_xatan(double x) {
    const double p0 = -8.750608600031904122785e-01, p1 = -1.615753718733365076637e+01,
                 p2 = -7.500855792314704667340e+01, p3 = -1.228866684490136173410e+02,
                 p4 = -6.485021904942025371773e+01, q0 = +2.485846490142306297962e+01,
                 q1 = +1.650270098316988542046e+02, q2 = +4.328810604912902668951e+02,
                 q3 = +4.853903996359136964868e+02, q4 = +1.945506571482613964425e+02;
    double z = __dmul_rn(x, x);
    double num = __dadd_rn(__dmul_rn(p0, z), p1);
    num = __dadd_rn(__dmul_rn(num, z), p2);
    num = __dadd_rn(__dmul_rn(num, z), p3);
    num = __dadd_rn(__dmul_rn(num, z), p4);
    double den = __dadd_rn(z, q0);
    den = __dadd_rn(__dmul_rn(den, z), q1);
    den = __dadd_rn(__dmul_rn(den, z), q2);
    den = __dadd_rn(__dmul_rn(den, z), q3);
    den = __dadd_rn(__dmul_rn(den, z), q4);
    z = __ddiv_rn(__dmul_rn(z, num), den);
    return __dadd_rn(__dmul_rn(x, z), x);
}

__device__ __forceinline__ double go_satan(double x) {
    const double morebits = 6.123233995736765886130e-17, tan3pio8 = 2.41421356237309504880;
    if (x <= 0.66) return go_xatan(x);
    if (x > tan3pio8) return __dadd_rn(__dadd_rn(PI / 2, -go_xatan(__ddiv_rn(1.0, x))), morebits);
    return __dadd_rn(__dadd_rn(PI / 4, go_xatan(__ddiv_rn(__dadd_rn(x, -1.0), __dadd_rn(x, 1.0)))), 0.5 * morebits);
}

// go_atan2: math.Atan2 for finite arguments (sphere/trig.go atan2).
__device__ double go_atan2(double y, double x) {
    if (isnan(y) || isnan(x)) return __longlong_as_double(0x7ff8000000000001ll);
    if (y == 0) return (x >= 0 && !signbit(x)) ? copysign(0.0, y) : copysign(PI, y);
    if (x == 0) return copysign(PI / 2, y);
    double q = __ddiv_rn(y, x);
    if (q > 0) {
        q = go_satan(q);
    } else if (q < 0) {
        q = -go_satan(-q);
    }
    if (x < 0) return q <= 0 ? __dadd_rn(q, PI) : __dadd_rn(q, -PI);
    return q;
}

// go_propagate: sphere.Propagate, in place on (lat, lon, heading).
__device__ void go_propagate(double* lat, double* lon, double* heading, double dist) {
    double s_lat, c_lat, s_lon, c_lon, s_h, c_h, s_d, c_d;
    go_sincos(*lat, &s_lat, &c_lat);
    go_sincos(*lon, &s_lon, &c_lon);
    go_sincos(*heading, &s_h, &c_h);
    const double px = __dmul_rn(c_lat, c_lon), py = __dmul_rn(c_lat, s_lon), pz = s_lat;
    const double ex = -s_lon, ey = c_lon;
    const double nx = -__dmul_rn(s_lat, c_lon), ny = -__dmul_rn(s_lat, s_lon), nz = c_lat;
    const double tx = __dadd_rn(__dmul_rn(s_h, ex), __dmul_rn(c_h, nx));
    const double ty = __dadd_rn(__dmul_rn(s_h, ey), __dmul_rn(c_h, ny));
    const double tz = __dmul_rn(c_h, nz);
    go_sincos(__ddiv_rn(dist, EARTH_RADIUS_M), &s_d, &c_d);
    const double qx = __dadd_rn(__dmul_rn(px, c_d), __dmul_rn(tx, s_d));
    const double qy = __dadd_rn(__dmul_rn(py, c_d), __dmul_rn(ty, s_d));
    const double qz = __dadd_rn(__dmul_rn(pz, c_d), __dmul_rn(tz, s_d));
    const double ux = __dadd_rn(__dmul_rn(tx, c_d), -__dmul_rn(px, s_d));
    const double uy = __dadd_rn(__dmul_rn(ty, c_d), -__dmul_rn(py, s_d));
    const double uz = __dadd_rn(__dmul_rn(tz, c_d), -__dmul_rn(pz, s_d));
    const double r = __dsqrt_rn(__dadd_rn(__dmul_rn(qx, qx), __dmul_rn(qy, qy)));
    const double lat2 = go_atan2(qz, r), lon2 = go_atan2(qy, qx);
    double east, north;
    if (r > 1e-100) {
        east = __dadd_rn(-__dmul_rn(qy, ux), __dmul_rn(qx, uy));
        north = __dadd_rn(-__dmul_rn(qz, __dadd_rn(__dmul_rn(qx, ux), __dmul_rn(qy, uy))), __dmul_rn(__dmul_rn(r, r), uz));
    } else {
        go_sincos(lat2, &s_lat, &c_lat);
        go_sincos(lon2, &s_lon, &c_lon);
        east = __dadd_rn(-__dmul_rn(s_lon, ux), __dmul_rn(c_lon, uy));
        north = __dadd_rn(__dadd_rn(-__dmul_rn(__dmul_rn(s_lat, c_lon), ux), -__dmul_rn(__dmul_rn(s_lat, s_lon), uy)),
                          __dmul_rn(c_lat, uz));
    }
    *lat = lat2;
    *lon = lon2;
    *heading = go_atan2(east, north);
}

// go_unit: sphere.UnitVector.
__device__ __forceinline__ void go_unit(double lat, double lon, double* x, double* y, double* z) {
    double sl, cl, sn, cn;
    go_sincos(lat, &sl, &cl);
    go_sincos(lon, &sn, &cn);
    *x = __dmul_rn(cl, cn);
    *y = __dmul_rn(cl, sn);
    *z = sl;
}
