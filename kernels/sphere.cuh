// sphere.cuh: the geometry shared by geoknn's kernels. Squared chords
// between unit vectors rank references exactly as great-circle distance does;
// the fp32 form ranks, the fp64 form decides near ties, and chord_err bounds
// the difference between the two.
#pragma once
#include <stdint.h>

// Exact arithmetic order shared by the scan and the rescan: the rescan must
// reproduce the scan's fp32 value bit for bit to recover the index.
__device__ __forceinline__ float chord2f(float ox, float oy, float oz, float4 r) {
    float dx = __fsub_rn(ox, r.x);
    float dy = __fsub_rn(oy, r.y);
    float dz = __fsub_rn(oz, r.z);
    float d = __fmul_rn(dx, dx);
    d = __fmaf_rn(dy, dy, d);
    return __fmaf_rn(dz, dz, d);
}

// fp64 squared chord without contraction, the same operation order as the Go
// CPU engine (engine/points.go chord2), so both engines rank identically.
__device__ __forceinline__ double chord2d(double ox, double oy, double oz,
                                          double rx, double ry, double rz) {
    double dx = __dsub_rn(ox, rx);
    double dy = __dsub_rn(oy, ry);
    double dz = __dsub_rn(oz, rz);
    return __dadd_rn(__dadd_rn(__dmul_rn(dx, dx), __dmul_rn(dy, dy)), __dmul_rn(dz, dz));
}

template <typename T>
__device__ __forceinline__ void unit64(const T* lat, const T* lon, int64_t i,
                                       double* x, double* y, double* z) {
    double sl, cl, sn, cn;
    sincos((double)lat[i], &sl, &cl);
    sincos((double)lon[i], &sn, &cn);
    *x = cl * cn;
    *y = cl * sn;
    *z = sl;
}

// Great-circle angle from a squared chord: 2 asin(c/2).
__device__ __forceinline__ double chord2_to_angle(double d2) {
    double h = sqrt(d2) * 0.5;
    return 2.0 * asin(h < 1.0 ? h : 1.0);
}

// Bound on |fp32 chord - exact chord| for inputs rounded once from fp64 (each
// component within 2^-25) and the scan's arithmetic (relative 3 * 2^-24),
// with margin; BENCHMARKS.md, "Exactness", says how it is used.
__device__ __forceinline__ double chord_err(double c) { return 1.5e-7 + 3.0e-7 * c; }
