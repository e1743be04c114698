// haversine.cu: exact brute-force nearest reference on the sphere.
//
// Distances are ranked by the squared chord between 3D unit vectors, which is
// monotone in the great-circle (haversine) distance and needs no
// transcendental per pair. The ranking runs in fp32; every observation whose
// winner is not separated from the runner-up by more than the proven fp32
// error bound is flagged and re-ranked in fp64 (refine_*), so the answer is
// the fp64 answer, ties to the lowest reference index.
//
// Kernels (extern "C", one per input precision T = double "f64" / float "f32"):
//   block_min_T  each block: a tile of observations x one slice of references
//                -> per (slice, observation) best d2, runner-up d2, index
//   global_min_T reduces the slices' partials, flags near-ties, writes the
//                index and the fp64 distance in radians
//   refine_T     fp64 re-ranking of the flagged observations
//
// Build: make ptx (nvcc -ptx -arch=compute_80). The Go side checks the launch
// shape against the constants below (internal/engine/kern_haversine.go).

#include <stdint.h>

#include "sphere.cuh"

#define BM_THREADS 256   // threads per block_min block
#define BM_OBS 8         // observations per thread, kept in registers
#define BM_TILE 1024     // references staged in shared memory per step
#define BM_CHUNK 32      // references per chunk-min (index recovered at the end)

// Pad value for references past the slice end: squared chord to any unit
// vector is >= 27 > 4, so a pad never beats a real reference.
#define PAD_COORD 4.0f

// block_min: grid (ceil(nobs / (BM_THREADS*BM_OBS)), nslices), block BM_THREADS.
// Slice s covers references [s*slice_len, min((s+1)*slice_len, nref)); slice_len
// is a multiple of BM_TILE. Partials are laid out [slice][obs].
template <typename T>
__device__ void block_min(const T* __restrict__ lat, const T* __restrict__ lon, int nobs,
                          const float4* __restrict__ ref, int nref, int slice_len,
                          float* __restrict__ part_d1, float* __restrict__ part_d2,
                          uint32_t* __restrict__ part_idx) {
    __shared__ float4 tile[BM_TILE];

    const int slice = blockIdx.y;
    const int rbeg = slice * slice_len;
    int rend = rbeg + slice_len;
    if (rend > nref) rend = nref;
    const int obs0 = blockIdx.x * (BM_THREADS * BM_OBS) + threadIdx.x;

    float ox[BM_OBS], oy[BM_OBS], oz[BM_OBS];
    float m1[BM_OBS], m2[BM_OBS];
    int bc[BM_OBS];
#pragma unroll
    for (int k = 0; k < BM_OBS; k++) {
        int i = obs0 + k * BM_THREADS;
        if (i >= nobs) i = nobs - 1;  // tail threads repeat a real observation, never write
        double x, y, z;
        unit64(lat, lon, i, &x, &y, &z);
        ox[k] = (float)x;
        oy[k] = (float)y;
        oz[k] = (float)z;
        m1[k] = INFINITY;
        m2[k] = INFINITY;
        bc[k] = 0;
    }

    int chunk = 0;  // chunk number within the slice
    for (int t0 = rbeg; t0 < rend; t0 += BM_TILE) {
        __syncthreads();
        for (int j = threadIdx.x; j < BM_TILE; j += BM_THREADS) {
            int r = t0 + j;
            tile[j] = r < rend ? ref[r] : make_float4(PAD_COORD, PAD_COORD, PAD_COORD, 0.0f);
        }
        __syncthreads();
        int tlen = rend - t0;
        if (tlen > BM_TILE) tlen = BM_TILE;
        const int nchunks = (tlen + BM_CHUNK - 1) / BM_CHUNK;
        for (int c = 0; c < nchunks; c++, chunk++) {
            float cm[BM_OBS];
            {
                float4 r = tile[c * BM_CHUNK];
#pragma unroll
                for (int k = 0; k < BM_OBS; k++) cm[k] = chord2f(ox[k], oy[k], oz[k], r);
            }
#pragma unroll 8
            for (int j = 1; j < BM_CHUNK; j++) {
                float4 r = tile[c * BM_CHUNK + j];
#pragma unroll
                for (int k = 0; k < BM_OBS; k++) cm[k] = fminf(cm[k], chord2f(ox[k], oy[k], oz[k], r));
            }
#pragma unroll
            for (int k = 0; k < BM_OBS; k++) {
                // Runner-up across chunks, then the best; strict < keeps the
                // earliest chunk on ties (lowest index).
                m2[k] = fminf(m2[k], fmaxf(cm[k], m1[k]));
                bool better = cm[k] < m1[k];
                m1[k] = better ? cm[k] : m1[k];
                bc[k] = better ? chunk : bc[k];
            }
        }
    }

    // Recover the index inside the best chunk and the runner-up inside it.
#pragma unroll
    for (int k = 0; k < BM_OBS; k++) {
        int i = obs0 + k * BM_THREADS;
        if (i >= nobs) continue;
        int base = rbeg + bc[k] * BM_CHUNK;
        int best = -1;
        float second = m2[k];
        for (int j = 0; j < BM_CHUNK; j++) {
            int r = base + j;
            if (r >= rend) break;
            float d = chord2f(ox[k], oy[k], oz[k], __ldg(&ref[r]));
            if (best < 0 && d == m1[k]) {
                best = r;
            } else {
                second = fminf(second, d);
            }
        }
        size_t o = (size_t)slice * nobs + i;
        part_d1[o] = m1[k];
        part_d2[o] = second;
        part_idx[o] = (uint32_t)(best < 0 ? base : best);
    }
}

// global_min: one thread per observation. ref64 holds fp64 unit vectors (x, y, z
// interleaved) of the same references. Flagged observations get their index
// appended to flagged[] (count in *nflagged) and are finished by refine.
template <typename T>
__device__ void global_min(const T* __restrict__ lat, const T* __restrict__ lon, int nobs,
                           const double* __restrict__ ref64, int nslices,
                           const float* __restrict__ part_d1, const float* __restrict__ part_d2,
                           const uint32_t* __restrict__ part_idx,
                           uint32_t* __restrict__ out_idx, float* __restrict__ out_dist,
                           uint32_t* __restrict__ flagged, uint32_t* __restrict__ nflagged) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nobs) return;
    float d1 = INFINITY, d2 = INFINITY;
    uint32_t idx = 0;
    for (int s = 0; s < nslices; s++) {
        size_t o = (size_t)s * nobs + i;
        float a = part_d1[o], b = part_d2[o];
        if (a < d1) {  // slices are in index order: strict < keeps the lowest index
            d2 = fminf(d2, d1);
            d1 = a;
            idx = part_idx[o];
        } else {
            d2 = fminf(d2, a);
        }
        d2 = fminf(d2, b);
    }
    // No runner-up (a single reference: d2 infinite) is no near tie.
    double c1 = sqrt((double)d1), c2 = sqrt((double)d2);
    if (d2 < INFINITY && c2 - c1 <= chord_err(c1) + chord_err(c2)) {
        flagged[atomicAdd(nflagged, 1u)] = (uint32_t)i;
        return;
    }
    double x, y, z;
    unit64(lat, lon, i, &x, &y, &z);
    const double* r = ref64 + 3 * (size_t)idx;
    out_idx[i] = idx;
    out_dist[i] = (float)chord2_to_angle(chord2d(x, y, z, r[0], r[1], r[2]));
}

// refine: one block per flagged observation, fp64 over every reference.
#define RF_THREADS 256
template <typename T>
__device__ void refine(const T* __restrict__ lat, const T* __restrict__ lon,
                       const double* __restrict__ ref64, int nref,
                       const uint32_t* __restrict__ flagged, const uint32_t* __restrict__ nflagged,
                       uint32_t* __restrict__ out_idx, float* __restrict__ out_dist) {
    __shared__ double sd[RF_THREADS];
    __shared__ int si[RF_THREADS];
    const uint32_t n = *nflagged;
    for (uint32_t f = blockIdx.x; f < n; f += gridDim.x) {
        const uint32_t i = flagged[f];
        double x, y, z;
        unit64(lat, lon, i, &x, &y, &z);
        double best = INFINITY;
        int bi = 0x7fffffff;
        for (int r = threadIdx.x; r < nref; r += RF_THREADS) {
            const double* p = ref64 + 3 * (size_t)r;
            double d = chord2d(x, y, z, p[0], p[1], p[2]);
            if (d < best) { best = d; bi = r; }  // r ascends per thread: strict < keeps the lowest
        }
        sd[threadIdx.x] = best;
        si[threadIdx.x] = bi;
        __syncthreads();
        for (int w = RF_THREADS / 2; w > 0; w >>= 1) {
            if (threadIdx.x < w) {
                double od = sd[threadIdx.x + w];
                int oi = si[threadIdx.x + w];
                if (od < sd[threadIdx.x] || (od == sd[threadIdx.x] && oi < si[threadIdx.x])) {
                    sd[threadIdx.x] = od;
                    si[threadIdx.x] = oi;
                }
            }
            __syncthreads();
        }
        if (threadIdx.x == 0) {
            out_idx[i] = (uint32_t)si[0];
            out_dist[i] = (float)chord2_to_angle(sd[0]);
        }
        __syncthreads();
    }
}

#define EXPORT(T, S)                                                                              \
    extern "C" __global__ void __launch_bounds__(BM_THREADS) block_min_##S(                       \
        const T* lat, const T* lon, int nobs, const float4* ref, int nref, int slice_len,         \
        float* part_d1, float* part_d2, uint32_t* part_idx) {                                     \
        block_min<T>(lat, lon, nobs, ref, nref, slice_len, part_d1, part_d2, part_idx);           \
    }                                                                                             \
    extern "C" __global__ void global_min_##S(                                                    \
        const T* lat, const T* lon, int nobs, const double* ref64, int nslices,                   \
        const float* part_d1, const float* part_d2, const uint32_t* part_idx, uint32_t* out_idx,  \
        float* out_dist, uint32_t* flagged, uint32_t* nflagged) {                                 \
        global_min<T>(lat, lon, nobs, ref64, nslices, part_d1, part_d2, part_idx, out_idx,        \
                      out_dist, flagged, nflagged);                                               \
    }                                                                                             \
    extern "C" __global__ void __launch_bounds__(RF_THREADS) refine_##S(                          \
        const T* lat, const T* lon, const double* ref64, int nref, const uint32_t* flagged,       \
        const uint32_t* nflagged, uint32_t* out_idx, float* out_dist) {                           \
        refine<T>(lat, lon, ref64, nref, flagged, nflagged, out_idx, out_dist);                   \
    }

EXPORT(double, f64)
EXPORT(float, f32)
