// resident.cu: kernels for observations kept on the GPU across queries (an
// engine.Session, e.g. a simulation's steps): replacing some observations in
// place (sent by the host, or drawn here: sphere.Replacement's twin), and
// counting the answers that changed since the previous query.

#include <stdint.h>

#include "sphere.cuh"
#include "twin.cuh"

// No previous answer: the observation is new since the last query.
#define NO_ANSWER 0xffffffffu

// The places in the cell-sorted records that replacements patched since the
// last sort: count (a device counter) entries of list, at most cap kept.
struct PatchList {
    uint32_t* list;
    uint32_t* count;
    int cap;
};

// replace_one: observation i becomes (la, lo): its radian columns, its
// unit-vector record (when recs is not null), its copy in the cell-sorted
// records (when sorted is not null; at pos[i], out of cell order until the
// next sort, marked OBS_PATCHED and its place listed in patched, so the
// query answers it apart) and its previous answer (reset, so it does not
// count as changed).
template <typename T>
__device__ __forceinline__ void replace_one(uint32_t i, T la, T lo, T* __restrict__ lat, T* __restrict__ lon,
                                            ObsRec* __restrict__ recs, ObsRec* __restrict__ sorted,
                                            const uint32_t* __restrict__ pos, uint32_t* __restrict__ prev,
                                            PatchList patched) {
    lat[i] = la;
    lon[i] = lo;
    prev[i] = NO_ANSWER;
    if (recs) {
        ObsRec r = make_rec((double)la, (double)lo, i);
        recs[i] = r;
        if (sorted) {
            const uint32_t at = pos[i];
            r.pad = OBS_PATCHED;
            sorted[at] = r;
            const uint32_t j = atomicAdd(patched.count, 1u);
            if (j < (uint32_t)patched.cap) patched.list[j] = at;
        }
    }
}

// replace_T: observation idx[j] becomes (new_lat[j], new_lon[j]) for j < k.
template <typename T>
__device__ void replace(const uint32_t* __restrict__ idx, const T* __restrict__ new_lat,
                        const T* __restrict__ new_lon, int k, T* __restrict__ lat, T* __restrict__ lon,
                        ObsRec* __restrict__ recs, ObsRec* __restrict__ sorted,
                        const uint32_t* __restrict__ pos, uint32_t* __restrict__ prev, PatchList patched) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= k) return;
    replace_one<T>(idx[j], new_lat[j], new_lon[j], lat, lon, recs, sorted, pos, prev, patched);
}

// gather_T: out[2j], out[2j+1] = lat[idx[j]], lon[idx[j]] as float64, for
// j < k (a session's planning sample, read back after replacements drawn
// on the device).
template <typename T>
__device__ void gather(const uint32_t* __restrict__ idx, int k, const T* __restrict__ lat,
                       const T* __restrict__ lon, double* __restrict__ out) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= k) return;
    out[2 * j] = (double)lat[idx[j]];
    out[2 * j + 1] = (double)lon[idx[j]];
}

// Replacement draws (sphere/replace.go): one block of DRAW_THREADS threads
// a block of REPLACE_BLOCK observations.
#define REPLACE_BLOCK 4096
#define DRAW_THREADS 64

// replace_count: round(frac*n), half away from zero as math.Round.
__device__ __forceinline__ long long replace_count(double frac, long long n) {
    return (long long)round(__dmul_rn(frac, (double)n));
}

// draw_below: sphere's drawBelow, an integer uniform in [0, bound).
__device__ __forceinline__ uint32_t draw_below(uint64_t key, uint32_t b, uint32_t j, uint64_t bound) {
    const uint4 c = philox4x32(make_uint4(j, b, 0x5eed, 0), make_uint2((uint32_t)key, (uint32_t)(key >> 32)));
    return (uint32_t)__umul64hi((uint64_t)c.x << 32 | c.y, bound);
}

// draw_replace_T: the replacement (frac, slot_key, point_seed, gen: 0
// sphere, 1 seed) of n observations, applied to those in [lo, hi), which
// the columns hold from index lo on. Block blockIdx.x is replacement block
// first_block + blockIdx.x: one thread draws its slots (Floyd's algorithm,
// sequential by definition) into a bit set, then each thread lists one
// word's slots in index order, draws their points and writes them.
template <typename T>
__device__ void draw_replace(int n, int lo, int hi, double frac, uint64_t slot_key, uint64_t point_seed, int gen,
                             int first_block, T* __restrict__ lat, T* __restrict__ lon,
                             ObsRec* __restrict__ recs, ObsRec* __restrict__ sorted,
                             const uint32_t* __restrict__ pos, uint32_t* __restrict__ prev, PatchList patched) {
    __shared__ unsigned long long set[REPLACE_BLOCK / 64];
    __shared__ int offset[REPLACE_BLOCK / 64];
    const int b = first_block + blockIdx.x;
    const int blo = b * REPLACE_BLOCK, bhi = min(blo + REPLACE_BLOCK, n);
    const long long first = replace_count(frac, blo);
    const int k = (int)(replace_count(frac, bhi) - first), m = bhi - blo;
    if (k <= 0) return;
    for (int w = threadIdx.x; w < REPLACE_BLOCK / 64; w += blockDim.x) set[w] = 0;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int j = m - k; j < m; j++) {
            uint32_t x = draw_below(slot_key, (uint32_t)b, (uint32_t)j, (uint64_t)(j + 1));
            if (set[x / 64] & (1ull << (x % 64))) x = j;
            set[x / 64] |= 1ull << (x % 64);
        }
        int sum = 0;
        for (int w = 0; w < REPLACE_BLOCK / 64; w++) {
            offset[w] = sum;
            sum += __popcll(set[w]);
        }
    }
    __syncthreads();
    for (int w = threadIdx.x; w < (m + 63) / 64; w += blockDim.x) {
        unsigned long long word = set[w];
        long long t = first + offset[w];
        while (word) {
            const int i = blo + 64 * w + __ffsll(word) - 1;
            word &= word - 1;
            if (i >= lo && i < hi) {
                double la, ln;
                if (gen == 0) {
                    sphere_at((uint64_t)t, point_seed, &la, &ln);
                } else {
                    seed_at((uint64_t)t, point_seed, &la, &ln);
                }
                replace_one<T>((uint32_t)(i - lo), (T)la, (T)ln, lat, lon, recs, sorted, pos, prev, patched);
            }
            t++;
        }
    }
}

// The face cells' build status words that say the query answered nothing
// (cells.cu's CS_FAILED and CS_SPLIT).
#define CELLS_FAILED 0
#define CELLS_SPLIT 3

// count_changed: adds to *count the observations whose answer differs from
// the previous query's (leaving out new ones, marked NO_ANSWER in prev).
// The host then takes cur as the previous answers and prev's memory for
// the next query's (the two columns swap places; no copy). Nothing is done
// where the face cells' status (when not null) says the query behind it
// answered nothing; the host swaps nothing then either.
//
// A step changes about a tenth of the answers, so nearly every warp has one:
// an atomic a warp on the one counter queued in L2 (2^24 answers: 0.43 ms on
// an H100, where their bytes need under 0.1 ms). Here each thread strides
// over the columns four answers a load (cur and prev 16-byte aligned), the
// block sums its threads', and adds once.
#define CC_THREADS 256

__device__ __forceinline__ uint32_t changed_one(uint32_t p, uint32_t c) { return p != NO_ANSWER && p != c; }

extern "C" __global__ void __launch_bounds__(CC_THREADS)
    count_changed(const uint32_t* __restrict__ cur, const uint32_t* __restrict__ prev, int n,
                  unsigned long long* __restrict__ count, const uint32_t* __restrict__ cells_status) {
    if (cells_status != nullptr && (cells_status[CELLS_SPLIT] | cells_status[CELLS_FAILED]) != 0) return;
    const int stride = gridDim.x * CC_THREADS, n4 = n >> 2;
    const uint4* __restrict__ cur4 = reinterpret_cast<const uint4*>(cur);
    const uint4* __restrict__ prev4 = reinterpret_cast<const uint4*>(prev);
    uint32_t changed = 0;
    for (int j = blockIdx.x * CC_THREADS + threadIdx.x; j < n4; j += stride) {
        const uint4 c = cur4[j], p = prev4[j];
        changed += changed_one(p.x, c.x) + changed_one(p.y, c.y) + changed_one(p.z, c.z) + changed_one(p.w, c.w);
    }
    for (int i = 4 * n4 + blockIdx.x * CC_THREADS + threadIdx.x; i < n; i += stride) changed += changed_one(prev[i], cur[i]);
    __shared__ uint32_t warp_sums[CC_THREADS / 32];
    for (int off = 16; off > 0; off >>= 1) changed += __shfl_down_sync(0xffffffffu, changed, off);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = changed;
    __syncthreads();
    if (threadIdx.x >= 32) return;
    changed = threadIdx.x < CC_THREADS / 32 ? warp_sums[threadIdx.x] : 0;
    for (int off = 16; off > 0; off >>= 1) changed += __shfl_down_sync(0xffffffffu, changed, off);
    if (threadIdx.x == 0 && changed != 0) atomicAdd(count, (unsigned long long)changed);
}

// gather_patched: out[j] = the record at place list[j] of sorted, for j < n,
// unmarked: the patched records, to be sorted by cell and queried apart.
extern "C" __global__ void gather_patched(const ObsRec* __restrict__ sorted, const uint32_t* __restrict__ list, int n,
                                          ObsRec* __restrict__ out) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    ObsRec r = sorted[list[j]];
    r.pad = 0;
    out[j] = r;
}

// map_index: idx[i] = orig[idx[i]], from distinct-reference indices to the
// caller's when duplicate references were merged.
extern "C" __global__ void map_index(uint32_t* __restrict__ idx, int n, const uint32_t* __restrict__ orig) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) idx[i] = orig[idx[i]];
}

#define EXPORT(T, S)                                                                            \
    extern "C" __global__ void replace_##S(const uint32_t* idx, const T* new_lat,                \
                                           const T* new_lon, int k, T* lat, T* lon,              \
                                           ObsRec* recs, ObsRec* sorted, const uint32_t* pos,    \
                                           uint32_t* prev, uint32_t* plist, uint32_t* pcount,    \
                                           int pcap) {                                           \
        replace<T>(idx, new_lat, new_lon, k, lat, lon, recs, sorted, pos, prev,                  \
                   PatchList{plist, pcount, pcap});                                              \
    }

EXPORT(double, f64)
EXPORT(float, f32)

#define EXPORT_GATHER(T, S)                                                                             \
    extern "C" __global__ void gather_##S(const uint32_t* idx, int k, const T* lat, const T* lon,        \
                                          double* out) {                                                \
        gather<T>(idx, k, lat, lon, out);                                                               \
    }

EXPORT_GATHER(double, f64)
EXPORT_GATHER(float, f32)

#define EXPORT_DRAW(T, S)                                                                                  \
    extern "C" __global__ void __launch_bounds__(DRAW_THREADS)                                             \
        draw_replace_##S(int n, int lo, int hi, double frac, uint64_t slot_key, uint64_t point_seed,      \
                         int gen, int first_block, T* lat, T* lon, ObsRec* recs, ObsRec* sorted,          \
                         const uint32_t* pos, uint32_t* prev, uint32_t* plist, uint32_t* pcount,          \
                         int pcap) {                                                                       \
        draw_replace<T>(n, lo, hi, frac, slot_key, point_seed, gen, first_block, lat, lon, recs, sorted,   \
                        pos, prev, PatchList{plist, pcount, pcap});                                        \
    }

EXPORT_DRAW(double, f64)
EXPORT_DRAW(float, f32)
