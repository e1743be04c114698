// sphere.cuh: the geometry shared by geoknn's kernels. Squared chords
// between unit vectors rank references exactly as great-circle distance does;
// the fp32 form ranks, the fp64 form decides near ties, and chord_err bounds
// the difference between the two. The fp64 unit vectors and the angles are
// the CPU engine's bit for bit (twin.cuh), so the engines' answers are too.
#pragma once
#include <stdint.h>

#include "twin.cuh"

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

// unit_go: the fp64 unit vector of (lat, lon) radians as the CPU engine
// makes it (internal/index/points.go Unit: sphere.Sincos, Go's math.Sincos
// with every operation rounded on its own, whose twin is go_sincos), so
// that both engines rank the same chords and report the same distances,
// bit for bit.
__device__ __forceinline__ void unit_go(double lat, double lon, double* x, double* y, double* z) {
    double sl, cl, sn, cn;
    go_sincos(lat, &sl, &cl);
    go_sincos(lon, &sn, &cn);
    *x = __dmul_rn(cl, cn);
    *y = __dmul_rn(cl, sn);
    *z = sl;
}

template <typename T>
__device__ __forceinline__ void unit64(const T* lat, const T* lon, int64_t i,
                                       double* x, double* y, double* z) {
    unit_go((double)lat[i], (double)lon[i], x, y, z);
}

// Great-circle angle from a squared chord: 2 asin(c/2), as the CPU engine
// computes it (internal/index/points.go ChordToAngle, fdlibm's asin).
__device__ __forceinline__ double chord2_to_angle(double d2) {
    const double h = __dmul_rn(__dsqrt_rn(d2), 0.5);
    return __dmul_rn(2.0, asin_fdlibm(h < 1.0 ? h : 1.0));
}

// Bound on |fp32 chord - exact chord| for inputs rounded once from fp64 (each
// component within 2^-25) and the scan's arithmetic (relative 3 * 2^-24),
// with margin; BENCHMARKS.md, "Exactness", says how it is used.
__device__ __forceinline__ double chord_err(double c) { return 1.5e-7 + 3.0e-7 * c; }

// One observation as the grid kernels keep it: its fp64 unit vector and its
// index in the job (or the resident set). 32 bytes, so a warp's loads of
// consecutive records are whole sectors.
#define OBS_REC_BYTES 32
struct __align__(16) ObsRec {
    double x, y, z;
    uint32_t i;
    uint32_t pad;  // OBS_PATCHED, or 0
};

// ObsRec.pad of a record a session patched into its sorted copy out of cell
// order: the main query leaves it to the patched records' own query.
#define OBS_PATCHED 1u

// make_rec: observation i's record from its radians, the unit vector as
// every kernel that makes one computes it.
__device__ __forceinline__ ObsRec make_rec(double la, double lo, uint32_t i) {
    ObsRec r;
    unit_go(la, lo, &r.x, &r.y, &r.z);
    r.i = i;
    r.pad = 0;
    return r;
}
static_assert(sizeof(ObsRec) == OBS_REC_BYTES, "ObsRec must stay 32 bytes: the Go side sizes its buffers by it");

// A block's records [base, base + cnt) moved between global and shared
// memory as 16-byte chunks, consecutive threads on consecutive chunks: a
// warp's accesses are whole sectors, where one thread a record would touch
// every sector twice. The caller synchronizes the block.
__device__ __forceinline__ void recs_to_shared(const ObsRec* __restrict__ g, long long base, int cnt,
                                               ObsRec* s) {
    const longlong2* src = reinterpret_cast<const longlong2*>(g + base);
    longlong2* dst = reinterpret_cast<longlong2*>(s);
    for (int c = threadIdx.x; c < 2 * cnt; c += blockDim.x) dst[c] = src[c];
}

__device__ __forceinline__ void shared_to_recs(const ObsRec* s, ObsRec* __restrict__ g, long long base,
                                               int cnt) {
    const longlong2* src = reinterpret_cast<const longlong2*>(s);
    longlong2* dst = reinterpret_cast<longlong2*>(g + base);
    for (int c = threadIdx.x; c < 2 * cnt; c += blockDim.x) dst[c] = src[c];
}

// One record copied as two 16-byte accesses (a scattered write).
__device__ __forceinline__ void copy_rec(ObsRec* __restrict__ dst, const ObsRec* src) {
    reinterpret_cast<longlong2*>(dst)[0] = reinterpret_cast<const longlong2*>(src)[0];
    reinterpret_cast<longlong2*>(dst)[1] = reinterpret_cast<const longlong2*>(src)[1];
}
