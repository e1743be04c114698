// grid.cu: exact nearest reference through a cell index (`--algo grid`).
//
// The references' unit vectors are bucketed into a G x G x G grid of cubes
// over [-1, 1]^3 (built by engine/grid.go, sorted by cell, each float4 holding
// x, y, z and the reference index's bits). Chord length between unit vectors
// is monotone in great-circle distance, so the nearest reference on the
// sphere is the nearest point in 3D and the search needs no pole, antimeridian
// or face-seam cases. Each thread takes one observation, scans shells of
// cells around its own (Chebyshev radius r = 0, 1, ...), visiting in each
// column only the z-cells that the unit sphere crosses (the runs table, two
// runs a column), skips any cell whose box is farther than the best found
// plus the fp32 error margin, and stops
// once everything outside the scanned cube is provably farther. It ranks in
// fp32 and tracks the runner-up; like global_min in haversine.cu, an
// observation whose winner is not clear of the runner-up by the proven fp32
// error bound is flagged for the fp64 refine kernel, so the answer equals
// the fp64 brute-force answer (ties to the lowest index).

#include <stdint.h>

#include "sphere.cuh"

#define GQ_THREADS 256

// Covers fp32 rounding of positions and cell bounds in the pruning tests.
#define GRID_SLACK 1e-6

__device__ __forceinline__ int cell_of(float v, int g, float h) {
    int c = (int)floorf((v + 1.0f) / h);
    return c < 0 ? 0 : (c >= g ? g - 1 : c);
}

__device__ __forceinline__ float box_dist(int c, float p, float h) {
    float lo = (float)c * h - 1.0f;
    float hi = lo + h;
    return fmaxf(fmaxf(lo - p, p - hi), 0.0f);
}

template <typename T>
__device__ void grid_query(const T* __restrict__ lat, const T* __restrict__ lon,
                           const uint32_t* __restrict__ perm, int nobs,
                           const uint32_t* __restrict__ cell_start, const float4* __restrict__ refs,
                           const short4* __restrict__ runs, int g, float h,
                           const double* __restrict__ ref64,
                           uint32_t* __restrict__ out_idx, float* __restrict__ out_dist,
                           uint32_t* __restrict__ flagged, uint32_t* __restrict__ nflagged) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nobs) return;
    const int i = perm[t];  // observations in column order: a warp's queries share cells
    double sl, cl, sn, cn;
    sincos((double)lat[i], &sl, &cl);
    sincos((double)lon[i], &sn, &cn);
    const double x = cl * cn, y = cl * sn, z = sl;
    const float px = (float)x, py = (float)y, pz = (float)z;
    const int cx = cell_of(px, g, h), cy = cell_of(py, g, h), cz = cell_of(pz, g, h);

    float d1 = INFINITY, d2 = INFINITY;
    uint32_t i1 = 0xffffffffu;
    float thr2 = INFINITY;  // cells whose box is farther (squared) cannot matter
    for (int r = 0; r < g; r++) {
        const int i0 = max(cx - r, 0), i9 = min(cx + r, g - 1);
        const int j0 = max(cy - r, 0), j9 = min(cy + r, g - 1);
        for (int ci = i0; ci <= i9; ci++) {
            const float bx = box_dist(ci, px, h);
            for (int cj = j0; cj <= j9; cj++) {
                const float by = box_dist(cj, py, h);
                if (bx * bx + by * by > thr2) continue;
                const bool edge = abs(ci - cx) == r || abs(cj - cy) == r;
                const short4 run = runs[ci * g + cj];
#pragma unroll
                for (int q = 0; q < 2; q++) {
                    const int lo = max(q == 0 ? (int)run.x : (int)run.z, cz - r);
                    const int hi = min(q == 0 ? (int)run.y : (int)run.w, cz + r);
                    for (int ck = lo; ck <= hi; ck++) {
                        if (!edge && ck != cz - r && ck != cz + r) {
                            ck = cz + r - 1;  // interior column: only the shell's two z faces
                            continue;
                        }
                        const float bz = box_dist(ck, pz, h);
                        if (bx * bx + by * by + bz * bz > thr2) continue;
                        const int c = (ci * g + cj) * g + ck;
                        const uint32_t s = cell_start[c], e = cell_start[c + 1];
                        for (uint32_t p = s; p < e; p++) {
                            const float4 rf = refs[p];
                            const float d = chord2f(px, py, pz, rf);
                            const uint32_t id = __float_as_uint(rf.w);
                            if (d < d1 || (d == d1 && id < i1)) {
                                d2 = d1;
                                d1 = d;
                                i1 = id;
                                const double c1 = sqrt((double)d1);
                                const float t = (float)(c1 + 2.0 * chord_err(c1) + GRID_SLACK);
                                thr2 = t * t;
                            } else {
                                d2 = fminf(d2, d);
                            }
                        }
                    }
                }
            }
        }
        // Everything unscanned lies outside the cube of cells within
        // Chebyshev radius r: stop once it is provably farther than the
        // winner plus the margin that decides a near tie.
        double lb = INFINITY;
        if (cx - r > 0) lb = fmin(lb, (double)px - ((double)(cx - r) * h - 1.0));
        if (cx + r < g - 1) lb = fmin(lb, ((double)(cx + r + 1) * h - 1.0) - (double)px);
        if (cy - r > 0) lb = fmin(lb, (double)py - ((double)(cy - r) * h - 1.0));
        if (cy + r < g - 1) lb = fmin(lb, ((double)(cy + r + 1) * h - 1.0) - (double)py);
        if (cz - r > 0) lb = fmin(lb, (double)pz - ((double)(cz - r) * h - 1.0));
        if (cz + r < g - 1) lb = fmin(lb, ((double)(cz + r + 1) * h - 1.0) - (double)pz);
        if (isinf(lb)) break;
        const double c1 = sqrt((double)d1);
        if (lb - GRID_SLACK - chord_err(lb) > c1 + chord_err(c1)) break;
    }
    // No runner-up seen (d2 infinite) means none within the margin exists.
    const double c1 = sqrt((double)d1), c2 = sqrt((double)d2);
    if (d2 < INFINITY && c2 - c1 <= chord_err(c1) + chord_err(c2)) {
        flagged[atomicAdd(nflagged, 1u)] = (uint32_t)i;
        return;
    }
    const double* rp = ref64 + 3 * (size_t)i1;
    out_idx[i] = i1;
    out_dist[i] = (float)chord2_to_angle(chord2d(x, y, z, rp[0], rp[1], rp[2]));
}

// Sorting the observations by grid column (a counting sort: keys and
// histogram, scan, scatter) before the query makes the threads of a warp
// search the same cells: coalesced, cached loads and little divergence.
template <typename T>
__device__ void grid_keys(const T* __restrict__ lat, const T* __restrict__ lon, int nobs, int g,
                          float h, uint32_t* __restrict__ keys, uint32_t* __restrict__ hist) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nobs) return;
    double sl, cl, sn, cn;
    sincos((double)lat[i], &sl, &cl);
    sincos((double)lon[i], &sn, &cn);
    const uint32_t key = (uint32_t)(cell_of((float)(cl * cn), g, h) * g + cell_of((float)(cl * sn), g, h));
    keys[i] = key;
    atomicAdd(&hist[key], 1u);
}

// Exclusive prefix sum of hist[0, n) in place, one block of GQ_SCAN threads.
#define GQ_SCAN 1024
extern "C" __global__ void __launch_bounds__(GQ_SCAN) grid_scan(uint32_t* hist, int n) {
    __shared__ uint32_t part[GQ_SCAN];
    const int per = (n + GQ_SCAN - 1) / GQ_SCAN;
    const int b = threadIdx.x * per, e = min(b + per, n);
    uint32_t sum = 0;
    for (int k = b; k < e; k++) sum += hist[k];
    part[threadIdx.x] = sum;
    __syncthreads();
    for (int off = 1; off < GQ_SCAN; off <<= 1) {  // Hillis-Steele inclusive scan
        uint32_t v = threadIdx.x >= off ? part[threadIdx.x - off] : 0;
        __syncthreads();
        part[threadIdx.x] += v;
        __syncthreads();
    }
    uint32_t run = part[threadIdx.x] - sum;
    for (int k = b; k < e; k++) {
        const uint32_t c = hist[k];
        hist[k] = run;
        run += c;
    }
}

extern "C" __global__ void grid_scatter(const uint32_t* __restrict__ keys, int nobs,
                                        uint32_t* __restrict__ cursor, uint32_t* __restrict__ perm) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nobs) return;
    perm[atomicAdd(&cursor[keys[i]], 1u)] = (uint32_t)i;
}

#define EXPORT(T, S)                                                                            \
    extern "C" __global__ void __launch_bounds__(GQ_THREADS) grid_query_##S(                    \
        const T* lat, const T* lon, const uint32_t* perm, int nobs, const uint32_t* cell_start, \
        const float4* refs, const short4* runs, int g, float h, const double* ref64,            \
        uint32_t* out_idx, float* out_dist, uint32_t* flagged, uint32_t* nflagged) {            \
        grid_query<T>(lat, lon, perm, nobs, cell_start, refs, runs, g, h, ref64, out_idx,       \
                      out_dist, flagged, nflagged);                                             \
    }                                                                                           \
    extern "C" __global__ void grid_keys_##S(const T* lat, const T* lon, int nobs, int g,       \
                                             float h, uint32_t* keys, uint32_t* hist) {         \
        grid_keys<T>(lat, lon, nobs, g, h, keys, hist);                                         \
    }

EXPORT(double, f64)
EXPORT(float, f32)
