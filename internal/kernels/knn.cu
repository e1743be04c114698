// knn.cu: exact k nearest references, and the references within a radius,
// through the cell index grid.cu builds. Brute force is the grid of one
// cell: its one shell holds every reference.
//
// One thread an observation, in cell order (the records of the observation
// sort). The walk is grid_query's, shell by shell, ranked in fp32:
//   k nearest  the best K+1 candidates are kept, sorted: in registers for
//              K <= 16 (grid_knn_8, grid_knn_16: a compare-and-swap pass,
//              fully unrolled), in local memory above (grid_knn),
//              and the (K+1)-th (or the distance limit, if nearer) prunes
//              cells and stops the walk, so every reference never visited
//              is provably farther than every candidate. When the K-th and
//              the (K+1)-th are clear of each other by the proven fp32 error
//              bound, the K kept are the K nearest: they are ordered in fp64.
//              Otherwise (a near tie at the boundary, rare) the thread
//              re-ranks in fp64 every reference of the cells within its
//              final threshold. Answers are fp64 squared chords <= max_d2
//              (the limit, decided as the CPU engine decides it), nearest
//              first, ties to the lower index, rows padded with NO_ANSWER.
//   within     every reference whose fp64 squared chord is <= max_d2:
//              counting decides in fp32 where the error bound allows and in
//              fp64 near the boundary; listing writes each one's index and
//              fp64 squared chord at the row's offset (the host orders rows).
//
// Build: internal/kernels/build.sh. The Go side is internal/engine/kern_knn.go.

#include <stdint.h>

#include "grid.cuh"
#include "sphere.cuh"

#define KNN_THREADS 128  // block of grid_knn and grid_within
#define KNN_MAX 64       // largest K: the engine answers larger K on the CPU
#define KNN_TILE 1024    // references a block stages in shared memory (brute force)
#define NO_ANSWER 0xffffffffu

// ALL_REFS runs its last argument (a block, with the reference in rf) for
// every one of the NREF references, tile by tile through shared memory, in
// the threads that are active; every thread of the block must call it.
#define ALL_REFS(NREF, ...)                                                              \
    do {                                                                                 \
        __shared__ float4 tile_[KNN_TILE];                                               \
        for (int t0_ = 0; t0_ < (NREF); t0_ += KNN_TILE) {                               \
            const int tl_ = min(KNN_TILE, (NREF) - t0_);                                 \
            __syncthreads();                                                             \
            for (int j_ = threadIdx.x; j_ < tl_; j_ += KNN_THREADS) tile_[j_] = refs[t0_ + j_]; \
            __syncthreads();                                                             \
            if (active)                                                                  \
                for (int q_ = 0; q_ < tl_; q_++) {                                       \
                    const float4 rf = tile_[q_];                                         \
                    __VA_ARGS__                                                          \
                }                                                                        \
        }                                                                                \
    } while (0)

// before orders candidates by distance, ties to the lower index.
template <typename D>
__device__ __forceinline__ bool before(D d, uint32_t id, D od, uint32_t oid) {
    return d < od || (d == od && id < oid);
}

// keep inserts (d, id) into the sorted list of at most cap candidates,
// dropping the worst when full; it reports whether the list changed.
template <typename D>
__device__ __forceinline__ bool keep(D* ld, uint32_t* li, int* cnt, int cap, D d, uint32_t id) {
    int n = *cnt;
    if (n == cap) {
        if (!before(d, id, ld[n - 1], li[n - 1])) return false;
        n--;
    }
    int j = n;
    for (; j > 0 && before(d, id, ld[j - 1], li[j - 1]); j--) {
        ld[j] = ld[j - 1];
        li[j] = li[j - 1];
    }
    ld[j] = d;
    li[j] = id;
    *cnt = n + 1;
    return true;
}

// insert puts (d, id) into the sorted list of N (padded with +inf and
// NO_ANSWER), dropping its last entry: a compare-and-swap an entry, fully
// unrolled, so the list stays in registers.
template <int N, typename D>
__device__ __forceinline__ void insert(D (&ld)[N], uint32_t (&li)[N], D d, uint32_t id) {
#pragma unroll
    for (int j = 0; j < N; j++) {
        const bool b = before(d, id, ld[j], li[j]);
        const D td = ld[j];
        const uint32_t ti = li[j];
        ld[j] = b ? d : td;
        li[j] = b ? id : ti;
        d = b ? td : d;
        id = b ? ti : id;
    }
}

// entry is v[j] for a j known only at run time, without indexing (which
// would move the list to local memory).
template <int N, typename V>
__device__ __forceinline__ V entry(const V (&v)[N], int j) {
    V x = v[0];
#pragma unroll
    for (int q = 1; q < N; q++) x = q == j ? v[q] : x;
    return x;
}

// The fp32 squared chord a limit of max_d2 (fp64, +inf for none) prunes at.
__device__ __forceinline__ float limit_d2f(double max_d2) {
    return max_d2 < (double)INFINITY ? __double2float_ru(max_d2) : INFINITY;
}

__device__ __forceinline__ float prune2(float d1) {
    if (!(d1 < INFINITY)) return INFINITY;
    const float tc = prune_chord(d1);
    return tc * tc;
}

extern "C" __global__ void __launch_bounds__(KNN_THREADS)
    grid_knn(const ObsRec* __restrict__ obs, int nobs, const uint32_t* __restrict__ cell_start,
             const float4* __restrict__ refs, const short4* __restrict__ runs, int g, float h,
             const double* __restrict__ ref64, int k, double max_d2, uint32_t* __restrict__ out_idx,
             float* __restrict__ out_dist, uint32_t* __restrict__ nrefined) {
    const int t = blockIdx.x * KNN_THREADS + threadIdx.x;
    const bool active = t < nobs;
    if (g > 1 && !active) return;  // brute force: every thread stages tiles
    const ObsRec o = obs[active ? t : nobs - 1];
    const float px = (float)o.x, py = (float)o.y, pz = (float)o.z;
    const int cx = cell_of(px, g, h), cy = cell_of(py, g, h), cz = cell_of(pz, g, h);

    float ld[KNN_MAX + 1];
    uint32_t li[KNN_MAX + 1];
    int cnt = 0;
    const int cap = k + 1;
    const float lim = limit_d2f(max_d2);
    float bound = lim;        // min(limit, the (K+1)-th candidate)
    float worst = INFINITY;  // the (K+1)-th: nothing farther gets in
    float thr2 = prune2(bound);
    int r = 0;
    if (g == 1) {
        ALL_REFS((int)cell_start[1], {
            const float d = chord2f(px, py, pz, rf);
            if (d <= worst && keep(ld, li, &cnt, cap, d, __float_as_uint(rf.w)) && cnt == cap) worst = ld[k];
        });
        if (!active) return;
        bound = fminf(lim, worst);
        thr2 = prune2(bound);
    }
    for (; g > 1 && r < g; r++) {
        SHELL_CELLS(r, thr2, {
            for (uint32_t p = cs; p < ce; p++) {
                const float4 rf = refs[p];
                const float d = chord2f(px, py, pz, rf);
                if (d <= worst && keep(ld, li, &cnt, cap, d, __float_as_uint(rf.w)) && cnt == cap) {
                    worst = ld[k];
                    if (worst < bound) {
                        bound = worst;
                        thr2 = prune2(bound);
                    }
                }
            }
        });
        bool all;
        if (shell_done(r, px, py, pz, cx, cy, cz, g, h, bound, &all)) break;
    }
    r = min(r, g - 1);

    double rd[KNN_MAX];
    uint32_t ri[KNN_MAX];
    int found = 0;
    bool tie = false;
    if (cnt == cap) {
        const double cK = sqrt((double)ld[k - 1]), cK1 = sqrt((double)ld[k]);
        tie = cK1 - cK <= chord_err(cK) + chord_err(cK1);
    }
    if (!tie) {
        for (int j = 0; j < min(cnt, k); j++) {
            const double* rp = ref64 + 3 * (size_t)li[j];
            const double d = chord2d(o.x, o.y, o.z, rp[0], rp[1], rp[2]);
            if (d <= max_d2) keep(rd, ri, &found, k, d, li[j]);
        }
    } else {
        // Every one of the K nearest has an exact chord at most the fp32
        // K-th's plus chord_err: within thr2, in the shells searched.
        for (int q = 0; q <= r; q++) {
            SHELL_CELLS(q, thr2, {
                for (uint32_t p = cs; p < ce; p++) {
                    const uint32_t id = __float_as_uint(refs[p].w);
                    const double* rp = ref64 + 3 * (size_t)id;
                    const double d = chord2d(o.x, o.y, o.z, rp[0], rp[1], rp[2]);
                    if (d <= max_d2) keep(rd, ri, &found, k, d, id);
                }
            });
        }
        atomicAdd(nrefined, 1u);
    }
    const size_t row = (size_t)o.i * k;
    for (int j = 0; j < k; j++) {
        out_idx[row + j] = j < found ? ri[j] : NO_ANSWER;
        out_dist[row + j] = j < found ? (float)chord2_to_angle(rd[j]) : INFINITY;
    }
}

// knn_reg answers k <= N-1 nearest with lists of N entries in registers.
template <int N>
__device__ __forceinline__ void knn_reg(const ObsRec* __restrict__ obs, int nobs, const uint32_t* __restrict__ cell_start,
                                    const float4* __restrict__ refs, const short4* __restrict__ runs, int g, float h,
                                    const double* __restrict__ ref64, int k, double max_d2,
                                    uint32_t* __restrict__ out_idx, float* __restrict__ out_dist,
                                    uint32_t* __restrict__ nrefined) {
    const int t = blockIdx.x * KNN_THREADS + threadIdx.x;
    const bool active = t < nobs;
    if (g > 1 && !active) return;  // brute force: every thread stages tiles
    const ObsRec o = obs[active ? t : nobs - 1];
    const float px = (float)o.x, py = (float)o.y, pz = (float)o.z;
    const int cx = cell_of(px, g, h), cy = cell_of(py, g, h), cz = cell_of(pz, g, h);

    float ld[N];
    uint32_t li[N];
#pragma unroll
    for (int j = 0; j < N; j++) ld[j] = INFINITY, li[j] = NO_ANSWER;
    int cnt = 0;  // candidates in the list
    const float lim = limit_d2f(max_d2);
    float bound = lim;       // min(limit, the (K+1)-th candidate)
    float worst = INFINITY;  // the (K+1)-th: nothing farther gets in
    float thr2 = prune2(bound);
    int r = 0;
    if (g == 1) {
        ALL_REFS((int)cell_start[1], {
            const float d = chord2f(px, py, pz, rf);
            if (d <= worst) {
                insert(ld, li, d, __float_as_uint(rf.w));
                if (++cnt > k) worst = entry(ld, k);
            }
        });
        if (!active) return;
        bound = fminf(lim, worst);
        thr2 = prune2(bound);
    }
    for (; g > 1 && r < g; r++) {
        SHELL_CELLS(r, thr2, {
            for (uint32_t p = cs; p < ce; p++) {
                const float4 rf = refs[p];
                const float d = chord2f(px, py, pz, rf);
                if (d > worst) continue;
                insert(ld, li, d, __float_as_uint(rf.w));
                if (++cnt > k) {
                    worst = entry(ld, k);
                    if (worst < bound) {
                        bound = worst;
                        thr2 = prune2(bound);
                    }
                }
            }
        });
        bool all;
        if (shell_done(r, px, py, pz, cx, cy, cz, g, h, bound, &all)) break;
    }
    r = min(r, g - 1);

    double rd[N];
    uint32_t ri[N];
#pragma unroll
    for (int j = 0; j < N; j++) rd[j] = INFINITY, ri[j] = NO_ANSWER;
    bool tie = false;
    if (cnt > k) {
        const double cK = sqrt((double)entry(ld, k - 1)), cK1 = sqrt((double)entry(ld, k));
        tie = cK1 - cK <= chord_err(cK) + chord_err(cK1);
    }
    if (!tie) {
        const int kk = min(cnt, k);
#pragma unroll
        for (int j = 0; j < N; j++) {
            if (j >= kk) continue;
            const double* rp = ref64 + 3 * (size_t)li[j];
            const double d = chord2d(o.x, o.y, o.z, rp[0], rp[1], rp[2]);
            if (d <= max_d2) insert(rd, ri, d, li[j]);
        }
    } else {
        // Every one of the K nearest has an exact chord at most the fp32
        // K-th's plus chord_err: within thr2, in the shells searched.
        for (int q = 0; q <= r; q++) {
            SHELL_CELLS(q, thr2, {
                for (uint32_t p = cs; p < ce; p++) {
                    const uint32_t id = __float_as_uint(refs[p].w);
                    const double* rp = ref64 + 3 * (size_t)id;
                    const double d = chord2d(o.x, o.y, o.z, rp[0], rp[1], rp[2]);
                    if (d <= max_d2) insert(rd, ri, d, id);
                }
            });
        }
        atomicAdd(nrefined, 1u);
    }
    const size_t row = (size_t)o.i * k;
#pragma unroll
    for (int j = 0; j < N; j++) {
        if (j >= k) continue;
        out_idx[row + j] = ri[j];
        out_dist[row + j] = ri[j] != NO_ANSWER ? (float)chord2_to_angle(rd[j]) : INFINITY;
    }
}

// grid_knn_K answers k up to K with its lists in registers (the engine picks
// the smallest that holds k; grid_knn, with local-memory lists, above).
#define EXPORT_KNN(K)                                                                                            \
    extern "C" __global__ void __launch_bounds__(KNN_THREADS) grid_knn_##K(                                      \
        const ObsRec* obs, int nobs, const uint32_t* cell_start, const float4* refs, const short4* runs, int g, \
        float h, const double* ref64, int k, double max_d2, uint32_t* out_idx, float* out_dist,                 \
        uint32_t* nrefined) {                                                                                   \
        knn_reg<K + 1>(obs, nobs, cell_start, refs, runs, g, h, ref64, k, max_d2, out_idx, out_dist, nrefined);    \
    }

EXPORT_KNN(8)
EXPORT_KNN(16)

// WITHIN_ONE counts (or lists) the reference rf if it lies within the
// limit: in fp32 when the error bound decides, else in fp64.
#define WITHIN_ONE(RF)                                                                    \
    do {                                                                                  \
        const uint32_t id_ = __float_as_uint((RF).w);                                     \
        if (offsets == nullptr) {                                                         \
            const double c_ = sqrt((double)chord2f(px, py, pz, (RF))), e_ = chord_err(c_); \
            if (c_ + e_ < in_below) {                                                     \
                n++;                                                                      \
                break;                                                                    \
            }                                                                             \
            if (c_ - e_ > out_above) break;                                               \
        }                                                                                 \
        const double* rp_ = ref64 + 3 * (size_t)id_;                                      \
        const double d_ = chord2d(o.x, o.y, o.z, rp_[0], rp_[1], rp_[2]);                 \
        if (d_ > max_d2) break;                                                           \
        if (offsets != nullptr && at + n < end) {                                         \
            list_idx[at + n] = id_;                                                       \
            list_d2[at + n] = d_;                                                         \
        }                                                                                 \
        n++;                                                                              \
    } while (0)

// within: offsets null counts into out_count[o.i]; otherwise row o.i's
// references go to list_idx and list_d2 from offsets[o.i] on, never past
// offsets[o.i+1] (the counting pass sized the row; the bound keeps a
// disagreement from writing into the next row), and out_count[0] counts
// the rows whose listing found other than the counting pass's number, which
// the host refuses rather than return a row padded or cut.
extern "C" __global__ void __launch_bounds__(KNN_THREADS)
    grid_within(const ObsRec* __restrict__ obs, int nobs, const uint32_t* __restrict__ cell_start,
                const float4* __restrict__ refs, const short4* __restrict__ runs, int g, float h,
                const double* __restrict__ ref64, double max_d2, const unsigned long long* __restrict__ offsets,
                uint32_t* __restrict__ out_count, uint32_t* __restrict__ list_idx, double* __restrict__ list_d2) {
    const int t = blockIdx.x * KNN_THREADS + threadIdx.x;
    const bool active = t < nobs;
    if (g > 1 && !active) return;  // brute force: every thread stages tiles
    const ObsRec o = obs[active ? t : nobs - 1];
    const float px = (float)o.x, py = (float)o.y, pz = (float)o.z;
    const int cx = cell_of(px, g, h), cy = cell_of(py, g, h), cz = cell_of(pz, g, h);
    const float lim = limit_d2f(max_d2);
    const float thr2 = prune2(lim);
    // Relative margins far above fp64's rounding of the chord and its root.
    const double clim = sqrt(max_d2), in_below = clim * (1.0 - 1e-12), out_above = clim * (1.0 + 1e-12);
    const unsigned long long at = offsets != nullptr && active ? offsets[o.i] : 0;
    const unsigned long long end = offsets != nullptr && active ? offsets[o.i + 1] : 0;
    uint32_t n = 0;
    if (g == 1) {
        ALL_REFS((int)cell_start[1], { WITHIN_ONE(rf); });
    }
    for (int r = 0; g > 1 && r < g; r++) {
        SHELL_CELLS(r, thr2, {
            for (uint32_t p = cs; p < ce; p++) {
                const float4 rf = refs[p];
                WITHIN_ONE(rf);
            }
        });
        bool all;
        if (shell_done(r, px, py, pz, cx, cy, cz, g, h, lim, &all)) break;
    }
    if (active && offsets == nullptr) out_count[o.i] = n;
    if (active && offsets != nullptr && at + n != end) atomicAdd(out_count, 1u);
}
